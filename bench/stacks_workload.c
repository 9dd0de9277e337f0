/* stacks_workload.c - makes many distinct allocation stacks.
 *
 * Prints "ready", waits for SIGUSR1, then walks a binary tree of calls of
 * depth DEPTH: at each level it calls either left() or right(), so every
 * leaf is reached through a different chain of return addresses. Each leaf
 * allocates (and keeps) one small block. The first NSTACKS of the 2^DEPTH
 * paths are walked: NSTACKS distinct stacks (issue 7 asks for 100,000). Prints
 * "done stacks N" and waits until SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DEPTH 17 /* room for 131072 distinct stacks */
#define NSTACKS 100000u

static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }

static void **kept;
static unsigned long nkept;

static void descend(unsigned path, int level);

__attribute__((noinline)) static void left(unsigned path, int level)
{
    descend(path, level + 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep the frame */
}

__attribute__((noinline)) static void right(unsigned path, int level)
{
    descend(path, level + 1);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void descend(unsigned path, int level)
{
    if (level == DEPTH) {
        kept[nkept++] = malloc(24);
        return;
    }
    if (path & (1u << level))
        right(path, level);
    else
        left(path, level);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    kept = calloc(1u << DEPTH, sizeof(void *));
    printf("ready\n");
    fflush(stdout);
    while (!go)
        pause();
    for (unsigned path = 0; path < NSTACKS; path++)
        descend(path, 0);
    printf("done stacks %lu\n", nkept);
    fflush(stdout);
    for (;;)
        pause();
}
