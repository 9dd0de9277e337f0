/* cli_twophase - two stacks that grow at different times, for the memory
 * chart's top growing stacks over a whole session (issue 30).
 *
 *   cli_twophase EARLY_SECONDS
 *
 * Prints "ready", then leaks 2,000,000 B/s from grow_all_along() until
 * SIGTERM. SIGUSR1 starts grow_early_only(): 3,000,000 B/s for
 * EARLY_SECONDS, after which it checks every block it made still holds its
 * pattern and prints "early done blocks=N ok". SIGTERM: prints
 * "steady blocks=N ok" (checked the same way) and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BLOCKS 4096

static volatile sig_atomic_t got_usr1, got_term;
static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_usr1 = 1;
    else
        got_term = 1;
}

struct blocks {
    unsigned char *b[MAX_BLOCKS];
    unsigned n;
    unsigned char fill;
    size_t size;
};

static __attribute__((noinline)) void grow_all_along(struct blocks *s)
{
    if (s->n < MAX_BLOCKS && (s->b[s->n] = malloc(s->size)))
        memset(s->b[s->n++], s->fill, s->size);
}

static __attribute__((noinline)) void grow_early_only(struct blocks *s)
{
    if (s->n < MAX_BLOCKS && (s->b[s->n] = malloc(s->size)))
        memset(s->b[s->n++], s->fill, s->size);
}

static int intact(const struct blocks *s)
{
    for (unsigned i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->size; k++)
            if (s->b[i][k] != s->fill)
                return 0;
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double early_s = argc > 1 ? atof(argv[1]) : 3.0;
    static struct blocks steady = { .fill = 0x5a, .size = 20000 }, early = { .fill = 0xa5, .size = 30000 };
    signal(SIGUSR1, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    double early_until = 0;
    int early_done = 0;
    while (!got_term) {
        struct timespec tick = { 0, 10 * 1000 * 1000 }; /* 100 blocks a second each */
        nanosleep(&tick, NULL);
        grow_all_along(&steady);
        if (got_usr1 && !early_until)
            early_until = now_s() + early_s;
        if (early_until && !early_done) {
            if (now_s() < early_until) {
                grow_early_only(&early);
            } else {
                early_done = 1;
                printf("early done blocks=%u %s\n", early.n, intact(&early) ? "ok" : "CORRUPT");
                fflush(stdout);
            }
        }
    }
    printf("steady blocks=%u %s\n", steady.n, intact(&steady) && intact(&early) ? "ok" : "CORRUPT");
    return 0;
}
