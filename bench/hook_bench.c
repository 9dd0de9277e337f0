/* hook_bench.c - the hooks' cost in isolation, without ptrace or the cli.
 *
 * Loads build/libheapinject.so with dlopen and calls heapinject_start in
 * this very process (as the injector would), then runs the same loop as
 * alloc_workload for a fixed number of operations per thread and prints
 * nanoseconds per malloc+free pair. Deterministic enough for
 * `valgrind --tool=callgrind` (instructions per operation) and for perf.
 *
 *   hook_bench [--rate R|0] [--threads N] [--ops N] [--depth D] [--detach]
 *              [--floor] [--sizes mixed|small|large] [--lib PATH]
 *
 * --rate 0 (the default) does not load the payload: the baseline.
 * --depth D makes the loop run D calls deep (stack capture cost grows
 * with depth). --detach starts and stops the payload before the loop.
 * --floor patches the same slots with hooks that only forward (payload/
 * hooks_floor.c): the cost of the design itself, nothing accounted.
 * Prints: "ns_per_op <wall> cpu_ns_per_op <cpu per thread> ops <n> threads <t> rate <r>".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/proto.h"

#define WINDOW 4096

static uint64_t ops_per_thread = 20000000;
static int depth;
static int sizes_mode; /* 0 mixed (alloc_workload), 1 small only, 2 large only */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* The distribution of alloc_workload: 90% 16-256 B, 9% 256 B-16 KiB,
 * 1% 16 KiB-1 MiB. */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = xorshift(rng);
    unsigned pct = (unsigned)(r % 100);
    r >>= 8;
    if (sizes_mode == 1 || (sizes_mode == 0 && pct < 90))
        return 16 + (size_t)(r % 241);
    if (sizes_mode == 0 && pct < 99)
        return 256 + (size_t)(r % (16384 - 256));
    return 16384 + (size_t)(r % (1048576 - 16384));
}

__attribute__((noinline)) static void loop(uint64_t seed)
{
    uint64_t rng = seed;
    void **window = calloc(WINDOW, sizeof(void *));
    for (uint64_t n = 0; n < ops_per_thread; n++) {
        size_t slot = (size_t)(xorshift(&rng) % WINDOW);
        free(window[slot]);
        char *p = malloc(pick_size(&rng));
        if (p)
            p[0] = (char)n;
        window[slot] = p;
    }
    for (size_t i = 0; i < WINDOW; i++)
        free(window[i]);
    free(window);
}

__attribute__((noinline)) static void nest(int d, uint64_t seed)
{
    if (d <= 0)
        loop(seed);
    else
        nest(d - 1, seed);
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep the frame */
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void *worker(void *arg)
{
    nest(depth, 0x9e3779b97f4a7c15ull ^ ((uint64_t)(uintptr_t)arg + 1) * 0x100000001b3ull);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long rate = 0;
    int threads = 1, detach = 0, floor = 0;
    const char *lib = "build/libheapinject.so";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            ops_per_thread = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
            depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            i++;
            sizes_mode = !strcmp(argv[i], "small") ? 1 : !strcmp(argv[i], "large") ? 2 : 0;
        } else if (!strcmp(argv[i], "--lib") && i + 1 < argc)
            lib = argv[++i];
        else if (!strcmp(argv[i], "--detach"))
            detach = 1;
        else if (!strcmp(argv[i], "--floor"))
            floor = 1;
        else {
            fprintf(stderr, "usage: %s [--rate R] [--threads N] [--ops N] [--depth D] [--detach] "
                            "[--floor] [--sizes mixed|small|large] [--lib PATH]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    if (rate) {
        void *h = dlopen(lib, RTLD_NOW);
        if (!h) {
            fprintf(stderr, "hook_bench: dlopen %s: %s\n", lib, dlerror());
            return 1;
        }
        int (*start)(const char *) = (int (*)(const char *))dlsym(h, "heapinject_start");
        int (*stop)(void) = (int (*)(void))dlsym(h, "heapinject_stop");
        char cfg[256];
        snprintf(cfg, sizeof(cfg), "v=%d rate=%lu ttl=0 tick_ms=500 floor=%d sock=/tmp/hook_bench.%d/agent.sock",
                 HI_PROTO_VERSION, rate, floor, (int)getpid());
        int r = start ? start(cfg) : -1;
        if (r != 0) {
            fprintf(stderr, "hook_bench: heapinject_start: %d\n", r);
            return 1;
        }
        if (detach && stop && stop() != 0) {
            fprintf(stderr, "hook_bench: heapinject_stop failed\n");
            return 1;
        }
    }
    pthread_t *tids = calloc((size_t)threads, sizeof(pthread_t));
    double c0 = cpu_s();
    uint64_t t0 = now_ns();
    for (long i = 0; i < threads; i++)
        pthread_create(&tids[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    uint64_t dt = now_ns() - t0;
    double cpu = cpu_s() - c0;
    printf("ns_per_op %.2f cpu_ns_per_op %.2f ops %llu threads %d rate %lu%s\n", (double)dt / (double)ops_per_thread,
           cpu * 1e9 / (double)ops_per_thread / threads,
           (unsigned long long)ops_per_thread, threads, rate, detach ? " detached" : "");
    return 0;
}
