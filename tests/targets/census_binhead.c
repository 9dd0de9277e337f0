/* census_binhead - leaked blocks whose only "pointer" is one of glibc's
 * own bin heads in main_arena (issue 25, a false negative of the census).
 *
 * A free chunk's address is its header, whose first word (prev_size) is
 * the last word of the in-use block before it; main_arena (in libc's
 * .data, scanned as globals) holds the addresses of free chunks in its
 * bins, fastbins and top. A leaked block right before a binned chunk
 * looked held by libc's data. Here: NTRIPLES times a block of LEAK_SIZE
 * bytes whose pointer is dropped, a block of 100,000 bytes freed after it
 * (too big for tcache and fastbins, below the mmap threshold: into the
 * unsorted bin, then a large bin), and a 40-byte block held by g_guard that keeps the freed one from
 * merging with what follows. Prints "truth leaked=N usable=U" and "ready";
 * on SIGUSR1 checks every guard block and prints "verify ok" or
 * "verify BAD". */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTRIPLES 200
#define LEAK_SIZE 1432 /* an unusual size: no other block of the process has it */
#define FREED_SIZE 100000 /* a large bin; the attach's own mallocs split one, not all */
#define GUARD_SIZE 40

static char *g_guard[NTRIPLES];
char *g_sort; /* not static: a store to it must stay */
static volatile sig_atomic_t g_verify;

static void on_usr1(int sig)
{
    (void)sig;
    g_verify = 1;
}

/* The triples; the usable size of a leaked block, 0 on failure. Its own
 * frame, scrubbed after (scrub_stack), so that no stale copy of a leaked
 * pointer stays on the stack for the census to find. */
static size_t lay_out(void)
{
    static char *freed[NTRIPLES];
    size_t usable = 0;
    for (int i = 0; i < NTRIPLES; i++) {
        char *leak = malloc(LEAK_SIZE);
        freed[i] = malloc(FREED_SIZE);
        g_guard[i] = malloc(GUARD_SIZE);
        if (!leak || !freed[i] || !g_guard[i])
            return 0;
        usable = malloc_usable_size(leak);
        memset(leak, 'L', usable); /* no pointer in it, to its last word */
        memset(g_guard[i], 'G', GUARD_SIZE);
    }
    /* all laid out first: freed earlier, a chunk would be split for the
     * next triple */
    for (int i = 0; i < NTRIPLES; i++) {
        free(freed[i]);
        freed[i] = NULL;
    }
    return usable;
}

static void scrub_stack(void)
{
    volatile char junk[65536];
    memset((char *)junk, 0, sizeof(junk));
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    size_t usable = lay_out();
    scrub_stack();
    /* one allocation more sorts the unsorted chunks into their bin */
    g_sort = malloc(100);
    if (!usable || !g_sort)
        return 1;
    memset(g_sort, 0, 100); /* split from a free chunk: its list links would point at one */
    printf("truth leaked=%d usable=%zu\n", NTRIPLES, usable);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (!g_verify)
            continue;
        g_verify = 0;
        int bad = 0;
        for (int i = 0; i < NTRIPLES; i++)
            for (int k = 0; k < GUARD_SIZE; k++)
                bad += g_guard[i][k] != 'G';
        printf(bad ? "verify BAD %d\n" : "verify ok\n", bad);
        fflush(stdout);
    }
}
