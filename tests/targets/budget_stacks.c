/* budget_stacks - many distinct stacks holding most of a tight memory
 * cgroup, for the profiler's memory budget (issue 25, item 7).
 *
 * budget_stacks [MIB]: 65,536 slots, each a block of MIB MiB / 65,536
 * (default 96 MiB in all: 1,536 bytes a block) allocated through a stack
 * of its own (16 levels, each one of two functions: the slot's bits), and
 * filled with the slot's pattern. Prints "ready", then replaces the
 * blocks one after another for ever (the old block checked, freed, a new
 * one allocated through the same stack and filled): every stack allocates
 * again and again. On SIGUSR1 prints "verify ok sweeps=N" or
 * "verify BAD ..." (every block checked, and every check of a replaced
 * one). Run it in a memory cgroup whose limit it nearly fills. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEVELS 16
#define SLOTS (1u << LEVELS)

static uint64_t *g_slot[SLOTS];
static size_t g_words;
static unsigned long g_bad, g_sweeps;
static volatile sig_atomic_t g_verify;

static void fill(uint64_t *b, unsigned slot)
{
    for (size_t w = 0; w < g_words; w++)
        b[w] = ((uint64_t)slot << 32) ^ w ^ 0xb0d6e7000000000full;
}

static int check(const uint64_t *b, unsigned slot)
{
    for (size_t w = 0; w < g_words; w++)
        if (b[w] != (((uint64_t)slot << 32) ^ w ^ 0xb0d6e7000000000full))
            return 0;
    return 1;
}

static uint64_t *down(int level, unsigned slot);

/* Two functions a level: which one a slot's stack passes through is its
 * bit there. The work after each call keeps it a call (no tail call), so
 * every level leaves its own return address. */
__attribute__((noinline)) static uint64_t *left(int level, unsigned slot)
{
    uint64_t *p = down(level + 1, slot);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) static uint64_t *right(int level, unsigned slot)
{
    uint64_t *p = down(level + 1, slot);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) static uint64_t *down(int level, unsigned slot)
{
    if (level == LEVELS) {
        uint64_t *p = malloc(g_words * sizeof(uint64_t));
        __asm__ volatile("" : : "r"(p) : "memory");
        return p;
    }
    return (slot >> level) & 1 ? right(level, slot) : left(level, slot);
}

static void on_usr1(int sig)
{
    (void)sig;
    g_verify = 1;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 96;
    g_words = (mib << 20) / SLOTS / sizeof(uint64_t);
    for (unsigned s = 0; s < SLOTS; s++) {
        if (!(g_slot[s] = down(0, s))) {
            printf("out of memory\n");
            return 1;
        }
        fill(g_slot[s], s);
    }
    signal(SIGUSR1, on_usr1);
    printf("ready %u stacks, %zu bytes each\n", SLOTS, g_words * sizeof(uint64_t));
    fflush(stdout);
    for (unsigned s = 0;; s = (s + 1) % SLOTS) {
        if (s == 0)
            g_sweeps++;
        g_bad += !check(g_slot[s], s);
        uint64_t *n = down(0, s);
        if (n) { /* out of memory: the old block stays */
            free(g_slot[s]);
            g_slot[s] = n;
            fill(n, s);
        }
        if (g_verify) {
            g_verify = 0;
            unsigned long bad = g_bad;
            for (unsigned i = 0; i < SLOTS; i++)
                bad += !check(g_slot[i], i);
            if (bad)
                printf("verify BAD %lu blocks\n", bad);
            else
                printf("verify ok sweeps=%lu\n", g_sweeps);
            fflush(stdout);
        }
    }
}
