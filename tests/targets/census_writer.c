/* census_writer - a heap that is rewritten all the time, for the cost of
 * a census's copy (every page written while the copy lives is copied).
 *
 * census_writer MIB [write|idle] [THREADS]: MIB MiB in blocks of 64 KiB
 * (glibc's heap, not mappings of their own), each filled with a pattern
 * of its index and a pass number. In "write" mode a thread rewrites every
 * block, pass after pass, checking the pattern the pass before left;
 * "idle" writes nothing after the start. THREADS more threads sleep in
 * nanosleep (default 0). Prints "ready"; on SIGUSR1 checks every block
 * (and that no pass found a block damaged) and prints "verify ok passes=N"
 * or "verify BAD ...". */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64u << 10)

static uint64_t **g_blocks;
static size_t g_n;
static atomic_ulong g_pass, g_bad;
static volatile sig_atomic_t g_verify;

static void fill(uint64_t *b, size_t i, unsigned long pass)
{
    for (size_t w = 0; w < BLOCK / 8; w++)
        b[w] = (i << 40) ^ ((uint64_t)pass << 20) ^ w ^ 0x5a5a000000000001ull;
}

static int check(const uint64_t *b, size_t i, unsigned long pass)
{
    for (size_t w = 0; w < BLOCK / 8; w++)
        if (b[w] != ((i << 40) ^ ((uint64_t)pass << 20) ^ w ^ 0x5a5a000000000001ull))
            return 0;
    return 1;
}

static void *writer(void *arg)
{
    (void)arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    for (;;) {
        unsigned long pass = atomic_load(&g_pass);
        for (size_t i = 0; i < g_n; i++) {
            if (!check(g_blocks[i], i, pass))
                atomic_fetch_add(&g_bad, 1);
            fill(g_blocks[i], i, pass + 1);
        }
        atomic_store(&g_pass, pass + 1);
    }
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    sigset_t usr1; /* SIGUSR1 is the main thread's, whose pause() it ends */
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    for (;;) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    g_verify = 1;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    int writing = argc > 2 ? !strcmp(argv[2], "write") : 1;
    int sleepers = argc > 3 ? atoi(argv[3]) : 0;
    g_n = mib * 16;
    g_blocks = calloc(g_n, sizeof(*g_blocks));
    for (size_t i = 0; i < g_n; i++) {
        g_blocks[i] = malloc(BLOCK);
        if (!g_blocks || !g_blocks[i]) {
            printf("out of memory\n");
            return 1;
        }
        fill(g_blocks[i], i, 0);
    }
    signal(SIGUSR1, on_usr1);
    pthread_t t;
    for (int i = 0; i < sleepers; i++)
        pthread_create(&t, NULL, sleeper, NULL);
    if (writing)
        pthread_create(&t, NULL, writer, NULL);
    printf("ready %zu blocks\n", g_n);
    fflush(stdout);
    for (;;) {
        pause();
        if (!g_verify)
            continue;
        g_verify = 0;
        /* A consistent view: the writer's pass moves on meanwhile, so in
         * write mode the passes' own checks are the verdict. */
        unsigned long bad = atomic_load(&g_bad);
        if (!writing)
            for (size_t i = 0; i < g_n; i++)
                bad += !check(g_blocks[i], i, 0);
        if (bad)
            printf("verify BAD %lu blocks\n", bad);
        else
            printf("verify ok passes=%lu\n", atomic_load(&g_pass));
        fflush(stdout);
    }
}
