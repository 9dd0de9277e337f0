/* pl_basic.c - a C target with known allocation stacks.
 *
 * run:   leak_a keeps 1000 blocks of 100 B, churn_b allocates and frees
 *        2000 blocks of 256 B, big_c keeps 10 blocks of 64 KiB.
 * free:  frees what leak_a and big_c kept.
 * bulk N: churn_small allocates and frees N MiB as 64 B blocks, churn_mid
 *        N MiB as 64 KiB blocks, churn_large N MiB as 1 MiB blocks (the
 *        default-rate accuracy test).
 * speed N: N malloc(32)/free pairs, prints ns per pair.
 */
#include <stdint.h>
#include <time.h>

#include "pl_common.h"

static void *kept_a[1000];
static void *kept_c[10];

__attribute__((noinline)) void leak_a(void)
{
    for (int i = 0; i < 1000; i++)
        kept_a[i] = malloc(100);
}

__attribute__((noinline)) void churn_b(void)
{
    for (int i = 0; i < 2000; i++) {
        void *p = malloc(256);
        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

__attribute__((noinline)) void big_c(void)
{
    for (int i = 0; i < 10; i++)
        kept_c[i] = malloc(64 * 1024);
}

__attribute__((noinline)) void churn_small(long mib)
{
    long n = mib * 1024 * 1024 / 64;
    for (long i = 0; i < n; i++) {
        void *p = malloc(64);
        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

__attribute__((noinline)) void churn_mid(long mib)
{
    long n = mib * 16;
    for (long i = 0; i < n; i++) {
        void *p = malloc(64 * 1024);
        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

__attribute__((noinline)) void churn_large(long mib)
{
    for (long i = 0; i < mib; i++) {
        void *p = malloc(1024 * 1024);
        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int handle(const char *cmd, const char *arg)
{
    if (strcmp(cmd, "run") == 0) {
        leak_a();
        churn_b();
        big_c();
        pl_say("truth leak_a alloc_objs=1000 alloc_bytes=100000 live_objs=1000 live_bytes=100000");
        pl_say("truth churn_b alloc_objs=2000 alloc_bytes=512000 live_objs=0 live_bytes=0");
        pl_say("truth big_c alloc_objs=10 alloc_bytes=655360 live_objs=10 live_bytes=655360");
        pl_say("done run");
    } else if (strcmp(cmd, "free") == 0) {
        for (int i = 0; i < 1000; i++)
            free(kept_a[i]);
        for (int i = 0; i < 10; i++)
            free(kept_c[i]);
        pl_say("done free");
    } else if (strcmp(cmd, "bulk") == 0) {
        long mib = atol(arg);
        churn_small(mib);
        churn_mid(mib);
        churn_large(mib);
        pl_say("truth churn_small alloc_bytes=%ld alloc_objs=%ld", mib << 20, (mib << 20) / 64);
        pl_say("truth churn_mid alloc_bytes=%ld alloc_objs=%ld", mib << 20, mib * 16);
        pl_say("truth churn_large alloc_bytes=%ld alloc_objs=%ld", mib << 20, mib);
        pl_say("done bulk");
    } else if (strcmp(cmd, "speed") == 0) {
        long n = atol(arg);
        uint64_t t0 = now_ns();
        for (long i = 0; i < n; i++) {
            void *p = malloc(32);
            __asm__ volatile("" ::"r"(p) : "memory");
            free(p);
        }
        uint64_t t1 = now_ns();
        pl_say("done speed ns_per_pair=%.1f", (double)(t1 - t0) / (double)n);
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    /* warm up: stdio buffers and the malloc slots are bound before attach */
    void *p = malloc(1);
    free(p);
    return pl_serve(handle);
}
