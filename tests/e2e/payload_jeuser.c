/* payload_jeuser.c - a library linked against libjemalloc.so.2, which
 * build/targets/pl_jemalloc dlopen()s with RTLD_DEEPBIND: its malloc-family
 * GOT slots bind to jemalloc while the executable's bind to glibc, two
 * allocator families in one process. Built by tests/e2e/payload_jemalloc.sh;
 * not a target program. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

static void *kept[100];

/* 100 blocks of 3000 bytes, kept live. */
__attribute__((noinline)) void je_keep(void)
{
    for (int i = 0; i < 100; i++)
        kept[i] = malloc(3000);
}

__attribute__((noinline)) void je_release(void)
{
    for (int i = 0; i < 100; i++) {
        free(kept[i]);
        kept[i] = NULL;
    }
}

/* 1 if this library's malloc is jemalloc's: its per-thread allocation
 * counter grows by the block (mallctl binds here to jemalloc too). */
int je_side_is_jemalloc(void)
{
    uint64_t a = 0, b = 0;
    size_t len = sizeof(a);
    volatile char *p;

    if (mallctl("thread.allocated", &a, &len, NULL, 0))
        return 0;
    p = malloc(50000);
    if (!p)
        return 0;
    p[0] = 1;
    len = sizeof(b);
    if (mallctl("thread.allocated", &b, &len, NULL, 0))
        return 0;
    free((void *)p);
    return b >= a + 50000;
}
