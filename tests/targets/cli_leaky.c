/* cli_leaky - a target for the cli's end-to-end tests that knows the truth.
 *
 *   cli_leaky [--burst BYTES] [--steady BYTES_PER_S] [--threads N] [--exit-after S]
 *
 * Always: churn (malloc/free of mixed sizes from churn_alloc(), a small ring
 * of live blocks) in the main thread and in N named worker threads.
 * --steady: leaks BYTES_PER_S from leak_steady(), counted exactly.
 * SIGUSR1: leaks exactly --burst bytes (default 32 MiB) from leak_in_burst()
 *          in blocks of 1000..8000 bytes, then prints "burst done leaked=N".
 * SIGUSR2: prints "truth steady=N burst=M" (bytes leaked so far).
 * SIGTERM/SIGINT: prints the truth line and exits 0.
 * --exit-after S: exits by itself S seconds after "ready" (prints "exiting").
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t got_usr1, got_usr2, got_term;
static void *volatile sink;
static unsigned long long steady_leaked, burst_leaked;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_usr1 = 1;
    else if (sig == SIGUSR2)
        got_usr2 = 1;
    else
        got_term = 1;
}

static void leak_in_burst(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    sink = p;
    burst_leaked += n;
}

static void leak_steady(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 2, n);
    sink = p;
    steady_leaked += n;
}

#define RING 64
struct churn {
    void *ring[RING];
    unsigned next;
};

static void churn_alloc(struct churn *c, unsigned i)
{
    size_t n = 16 + (i * 2654435761u) % 4096;
    unsigned k = c->next++ % RING;
    free(c->ring[k]);
    c->ring[k] = malloc(n);
    if (c->ring[k])
        ((char *)c->ring[k])[0] = 1;
}

static void pause_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000L };
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    char name[16];
    struct churn c = { { 0 }, 0 };
    snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    for (unsigned i = 0;; i++) {
        churn_alloc(&c, i);
        if (i % 50 == 0)
            pause_ms(1); /* modest: tests run on 2 cores */
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    unsigned long long burst = 32ull << 20, steady = 0;
    int threads = 0;
    double exit_after = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--burst"))
            burst = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--steady"))
            steady = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--exit-after"))
            exit_after = atof(argv[i + 1]);
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    for (int t = 0; t < threads; t++) {
        pthread_t th;
        pthread_create(&th, NULL, worker, (void *)(long)t);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");

    struct churn c = { { 0 }, 0 };
    double start = now_s(), last = start, debt = 0;
    for (unsigned i = 0; !got_term; i++) {
        for (int k = 0; k < 50; k++)
            churn_alloc(&c, i * 50 + (unsigned)k);
        double now = now_s();
        if (steady) {
            debt += (now - last) * (double)steady;
            while (debt >= 4096) {
                leak_steady(4096);
                debt -= 4096;
            }
        }
        last = now;
        if (got_usr1) {
            got_usr1 = 0;
            unsigned long long before = burst_leaked;
            for (size_t n = 0, j = 0; burst_leaked - before < burst; j++) {
                n = 1000 + (j * 7919) % 7001;
                if (burst_leaked - before + n > burst)
                    n = (size_t)(burst - (burst_leaked - before));
                leak_in_burst(n);
            }
            printf("burst done leaked=%llu\n", burst_leaked - before);
        }
        if (got_usr2) {
            got_usr2 = 0;
            printf("truth steady=%llu burst=%llu\n", steady_leaked, burst_leaked);
        }
        if (exit_after > 0 && now - start >= exit_after) {
            printf("exiting\n");
            return 0;
        }
        pause_ms(2);
    }
    printf("truth steady=%llu burst=%llu\n", steady_leaked, burst_leaked);
    return 0;
}
