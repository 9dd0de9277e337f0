/* cli_deepsame: two call paths that share their innermost ten frames
 * (leaf < d1 < ... < d9) and part only above them (from_a, from_b), so
 * that a report's first lines of both stacks read the same. On SIGUSR1
 * from_a allocates 2000 blocks of 4 KiB and from_b 1000, kept until the
 * next SIGUSR1 frees them first; prints "allocated". On SIGUSR2 checks every block and prints "data ok" or
 * "data BAD". Prints "ready" first. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096
#define MAXBLOCKS 3000

static unsigned char *blocks[MAXBLOCKS];
static size_t nblocks;
static volatile sig_atomic_t go, check;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        go = 1;
    else
        check = 1;
}

__attribute__((noinline)) static void leaf(unsigned char tag)
{
    unsigned char *b = malloc(BLOCK);
    if (!b)
        return;
    memset(b, tag, BLOCK);
    blocks[nblocks++] = b;
}

#define LINK(name, next) \
    __attribute__((noinline)) static void name(unsigned char tag) { next(tag); __asm__ volatile("" ::: "memory"); }
LINK(d1, leaf)
LINK(d2, d1)
LINK(d3, d2)
LINK(d4, d3)
LINK(d5, d4)
LINK(d6, d5)
LINK(d7, d6)
LINK(d8, d7)
LINK(d9, d8)

__attribute__((noinline)) static void from_a(void)
{
    for (int i = 0; i < 2000; i++)
        d9('A');
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void from_b(void)
{
    for (int i = 0; i < 1000; i++)
        d9('B');
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    signal(SIGUSR1, on_signal);
    signal(SIGUSR2, on_signal);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (go) {
            go = 0;
            for (size_t i = 0; i < nblocks; i++) /* a new round replaces the last */
                free(blocks[i]);
            nblocks = 0;
            from_a();
            from_b();
            printf("allocated\n");
            fflush(stdout);
        }
        if (check) {
            check = 0;
            int good = nblocks == 3000;
            for (size_t i = 0; i < nblocks; i++)
                for (size_t k = 0; k < BLOCK; k++)
                    good &= blocks[i][k] == (i < 2000 ? 'A' : 'B');
            printf("data %s\n", good ? "ok" : "BAD");
            fflush(stdout);
        }
    }
}
