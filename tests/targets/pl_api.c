/* pl_api.c - every malloc-family entry point with known sizes.
 *   run   see the truth lines it prints; everything the functions keep is
 *         live afterwards.
 *   free  frees it all (reading keep[] also stops the compiler from
 *         dropping allocations whose results are never used).
 */
#include <malloc.h>
#include <stdint.h>

#include "pl_common.h"

static void *keep[1000];
static int nkeep;

__attribute__((noinline)) void f_calloc(void)
{
    for (int i = 0; i < 100; i++)
        keep[nkeep++] = calloc(10, 30);
}

__attribute__((noinline)) void f_realloc(void)
{
    void *p = NULL;
    for (int i = 1; i <= 100; i++)
        p = realloc(p, (size_t)i * 100);
    keep[nkeep++] = p;
}

__attribute__((noinline)) void f_reallocarray(void)
{
    void *p = NULL;
    for (int i = 1; i <= 50; i++)
        p = reallocarray(p, (size_t)i, 64);
    keep[nkeep++] = p;
}

__attribute__((noinline)) void f_posix_memalign(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 64, 1000) == 0)
            keep[nkeep++] = p;
    }
}

__attribute__((noinline)) void f_aligned_alloc(void)
{
    for (int i = 0; i < 100; i++)
        keep[nkeep++] = aligned_alloc(256, 512);
}

__attribute__((noinline)) void f_memalign(void)
{
    for (int i = 0; i < 100; i++)
        keep[nkeep++] = memalign(128, 700);
}

__attribute__((noinline)) void f_valloc(void)
{
    for (int i = 0; i < 10; i++)
        keep[nkeep++] = valloc(5000);
}

__attribute__((noinline)) void f_pvalloc(void)
{
    for (int i = 0; i < 10; i++)
        keep[nkeep++] = pvalloc(5000);
}

/* Failing calls must change nothing: not counted, not sampled. */
__attribute__((noinline)) void f_failing(void)
{
    volatile size_t huge = SIZE_MAX / 2;
    void *p = malloc(huge);
    void *q = calloc(huge, 4);
    void *r = malloc(16);
    void *s = realloc(r, huge);
    keep[nkeep++] = s ? s : r;
    __asm__ volatile("" ::"r"(p), "r"(q) : "memory");
}

static int handle(const char *cmd, const char *arg)
{
    (void)arg;
    if (strcmp(cmd, "run") == 0) {
        f_calloc();
        f_realloc();
        f_reallocarray();
        f_posix_memalign();
        f_aligned_alloc();
        f_memalign();
        f_valloc();
        f_pvalloc();
        f_failing();
        pl_say("truth f_calloc alloc_objs=100 alloc_bytes=30000 live_objs=100 live_bytes=30000");
        pl_say("truth f_realloc alloc_objs=100 alloc_bytes=505000 live_objs=1 live_bytes=10000");
        pl_say("truth f_reallocarray alloc_objs=50 alloc_bytes=81600 live_objs=1 live_bytes=3200");
        pl_say("truth f_posix_memalign alloc_objs=100 alloc_bytes=100000 live_objs=100 live_bytes=100000");
        pl_say("truth f_aligned_alloc alloc_objs=100 alloc_bytes=51200 live_objs=100 live_bytes=51200");
        pl_say("truth f_memalign alloc_objs=100 alloc_bytes=70000 live_objs=100 live_bytes=70000");
        pl_say("truth f_valloc alloc_objs=10 alloc_bytes=50000 live_objs=10 live_bytes=50000");
        pl_say("truth f_pvalloc alloc_objs=10 alloc_bytes=50000 live_objs=10 live_bytes=50000");
        pl_say("truth f_failing alloc_objs=1 alloc_bytes=16 live_objs=1 live_bytes=16");
        pl_say("done run");
    } else if (strcmp(cmd, "free") == 0) {
        for (int i = 0; i < nkeep; i++)
            free(keep[i]);
        nkeep = 0;
        pl_say("done free");
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
