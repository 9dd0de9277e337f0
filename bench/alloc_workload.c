/* alloc_workload.c - the allocation-heavy workload `make bench` attaches to.
 *
 * N threads (default: cores) allocate and free at full speed: sizes from
 * 16 B to 1 MiB (mostly small, like real services), a window of live blocks
 * per thread replaced at random, and a steady leak of one block every
 * LEAK_EVERY operations. Every interval the main thread prints one line:
 *
 *   tick <seconds since start> ops_per_s <n> max_gap_ms <g> ops <total>
 *
 * where max_gap_ms is the longest time a thread that sleeps 1 ms at a time
 * was kept from running during that interval (a stall detector: the target's
 * longest pause while we attach). The line "ready" comes first.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 4096
#define LEAK_EVERY 20000
#define COUNTER_STRIDE 16 /* uint64s per counter: one cache line each */

static int nthreads;
static _Atomic uint64_t *op_counters;
static _Atomic uint64_t leaked_bytes;
static _Atomic long max_gap_us;
static volatile sig_atomic_t stop_requested;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* 90% 16-256 B, 9% 256 B-16 KiB, 1% 16 KiB-1 MiB. */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = xorshift(rng);
    unsigned pct = (unsigned)(r % 100);
    r >>= 8;
    if (pct < 90)
        return 16 + (size_t)(r % 241);
    if (pct < 99)
        return 256 + (size_t)(r % (16384 - 256));
    return 16384 + (size_t)(r % (1048576 - 16384));
}

/* noinline so the leak has a stack of its own in every profile. */
__attribute__((noinline)) static void *leak_steady(void)
{
    void *p = malloc(64);
    if (p) {
        memset(p, 0x5a, 64);
        atomic_fetch_add_explicit(&leaked_bytes, 64, memory_order_relaxed);
    }
    return p;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(id + 1) * 0x100000001b3ull;
    void **window = calloc(WINDOW, sizeof(void *));
    _Atomic uint64_t *ops = &op_counters[id * COUNTER_STRIDE];
    uint64_t n = 0;
    while (!stop_requested) {
        size_t slot = (size_t)(xorshift(&rng) % WINDOW);
        free(window[slot]);
        size_t size = pick_size(&rng);
        char *p = malloc(size);
        if (p)
            p[0] = (char)n; /* touch it, as a real program would */
        window[slot] = p;
        if (++n % LEAK_EVERY == 0)
            (void)leak_steady();
        if ((n & 255) == 0)
            atomic_fetch_add_explicit(ops, 256, memory_order_relaxed);
    }
    for (size_t i = 0; i < WINDOW; i++)
        free(window[i]);
    free(window);
    return NULL;
}

static void *stall_detector(void *arg)
{
    (void)arg;
    uint64_t last = now_us();
    while (!stop_requested) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        uint64_t t = now_us();
        long gap = (long)(t - last);
        long cur = atomic_load(&max_gap_us);
        while (gap > cur && !atomic_compare_exchange_weak(&max_gap_us, &cur, gap))
            ;
        last = t;
    }
    return NULL;
}

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int main(int argc, char **argv)
{
    double seconds = 0; /* 0: until SIGTERM/SIGINT */
    int interval_ms = 500;
    nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc)
            interval_ms = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--threads N] [--seconds S] [--interval-ms MS]\n", argv[0]);
            return 2;
        }
    }
    if (nthreads < 1)
        nthreads = 1;
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    op_counters = calloc((size_t)nthreads * COUNTER_STRIDE, sizeof(*op_counters));
    pthread_t *threads = calloc((size_t)nthreads + 1, sizeof(pthread_t));
    for (long i = 0; i < nthreads; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);
    pthread_create(&threads[nthreads], NULL, stall_detector, NULL);
    printf("ready pid %d threads %d\n", (int)getpid(), nthreads);
    fflush(stdout);

    uint64_t start = now_us(), last_t = start, last_ops = 0;
    while (!stop_requested) {
        usleep((useconds_t)interval_ms * 1000u);
        uint64_t t = now_us(), ops = 0;
        for (int i = 0; i < nthreads; i++)
            ops += atomic_load_explicit(&op_counters[i * COUNTER_STRIDE], memory_order_relaxed);
        double dt = (double)(t - last_t) / 1e6;
        long gap = atomic_exchange(&max_gap_us, 0);
        printf("tick %.3f ops_per_s %.0f max_gap_ms %.2f ops %llu\n", (double)(t - start) / 1e6,
               (double)(ops - last_ops) / dt, (double)gap / 1000.0, (unsigned long long)ops);
        fflush(stdout);
        last_t = t;
        last_ops = ops;
        if (seconds > 0 && (double)(t - start) / 1e6 >= seconds)
            stop_requested = 1;
    }
    for (int i = 0; i <= nthreads; i++)
        pthread_join(threads[i], NULL);
    printf("done leaked_bytes %llu\n", (unsigned long long)atomic_load(&leaked_bytes));
    return 0;
}
