/* cli_tick_rise - one stack that rises during a session, for the memory
 * chart's top growing stacks (issue 30).
 *
 *   cli_tick_rise a|b|fall [SECONDS]
 *
 * Prints "ready", waits for SIGUSR1 (sent once the profiler is in, so the
 * rising stack is the first the profiler samples: bucket 0 in every
 * process started this way), then leaks 2,000,000 B/s:
 *   a     from rise_in_a() until SIGTERM;
 *   b     from rise_in_b() until SIGTERM;
 *   fall  from rise_then_fall() for SECONDS (default 2), then frees every
 *         other block, prints "fell kept=N ok" and stays flat.
 * SIGTERM: checks every block still held keeps its pattern, prints
 * "done blocks=N ok" and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BLOCKS 4096
#define BLOCK 20000

static volatile sig_atomic_t got_usr1, got_term;
static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_usr1 = 1;
    else
        got_term = 1;
}

static unsigned char *blocks[MAX_BLOCKS];
static unsigned nblocks;

static unsigned char fill_of(unsigned i)
{
    return (unsigned char)(0x5a ^ i);
}

/* The malloc is in each riser itself: its series is named after it. */
#define ADD_BLOCK()                                                              \
    do {                                                                         \
        if (nblocks < MAX_BLOCKS && (blocks[nblocks] = malloc(BLOCK))) {         \
            memset(blocks[nblocks], fill_of(nblocks), BLOCK);                    \
            nblocks++;                                                           \
        }                                                                        \
    } while (0)

static __attribute__((noinline)) void rise_in_a(void) { ADD_BLOCK(); }
static __attribute__((noinline)) void rise_in_b(void) { ADD_BLOCK(); }
static __attribute__((noinline)) void rise_then_fall(void) { ADD_BLOCK(); }

/* Every block held keeps its pattern; the freed ones are NULL. */
static unsigned intact(int *ok)
{
    unsigned held = 0;
    *ok = 1;
    for (unsigned i = 0; i < nblocks; i++) {
        if (!blocks[i])
            continue;
        held++;
        for (size_t k = 0; k < BLOCK; k++)
            if (blocks[i][k] != fill_of(i))
                *ok = 0;
    }
    return held;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "a";
    double rise_s = argc > 2 ? atof(argv[2]) : 2.0;
    void (*rise)(void) = !strcmp(mode, "b") ? rise_in_b : !strcmp(mode, "fall") ? rise_then_fall : rise_in_a;
    int falls = !strcmp(mode, "fall");
    signal(SIGUSR1, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    while (!got_usr1 && !got_term) {
        struct timespec w = { 0, 5 * 1000 * 1000 };
        nanosleep(&w, NULL);
    }
    double until = now_s() + rise_s;
    int fell = 0, ok;
    while (!got_term) {
        struct timespec tick = { 0, 10 * 1000 * 1000 }; /* 100 blocks a second */
        nanosleep(&tick, NULL);
        if (!falls || now_s() < until) {
            rise();
        } else if (!fell) {
            for (unsigned i = 0; i < nblocks; i += 2) {
                free(blocks[i]);
                blocks[i] = NULL;
            }
            fell = 1;
            unsigned held = intact(&ok);
            printf("fell kept=%u %s\n", held, ok ? "ok" : "CORRUPT");
            fflush(stdout);
        }
    }
    unsigned held = intact(&ok);
    printf("done blocks=%u %s\n", held, ok ? "ok" : "CORRUPT");
    return 0;
}
