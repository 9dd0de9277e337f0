/* pl_exact.c - a fixed sequence of malloc-family calls whose exact counts
 * are known, for tests/e2e/payload_exact.sh (RATE=1, every counter with ==).
 *
 *   seq      ex_seq(): malloc(100), calloc(10, 30), realloc grow to 5000,
 *            realloc shrink to 200, realloc(NULL, 777), realloc(that, 0),
 *            posix_memalign(64, 1000), malloc(200000) (an mmapped chunk),
 *            realloc of it to 400000; keeps 4 blocks live.
 *   release  ex_release(): frees the 4 blocks, and free(NULL) (not a call
 *            the payload counts).
 * Each prints its truth as counted by the payload: allocations and frees
 * by the block's usable size (malloc_usable_size, what the payload reads
 * from glibc's chunk header), taken just after the block comes and just
 * before it goes (issue 16: allocations used to count the requested size,
 * so freed bytes could exceed allocated ones); a realloc counts as the free of its
 * old block and the allocation of the new one, realloc(p, 0) as a free
 * only, realloc(NULL, n) as an allocation only:
 *   truth CMD alloc_calls=A alloc_bytes=B free_calls=C free_bytes=D
 *         req_free_bytes=E live_objs=F live_bytes=G req_alloc_bytes=H
 * (req_*_bytes: the requested sizes (calloc: count * size), which must
 * not pass for the usable sizes; the sampled estimates are in them), then
 * "done CMD". */
#include <malloc.h>
#include <stdint.h>

#include "pl_common.h"

static void *volatile kept[4];

struct truth {
    unsigned long long alloc_calls, alloc_bytes, free_calls, free_bytes, req_free, req_alloc;
};

static void freed(struct truth *t, void *p, size_t requested)
{
    t->free_calls++;
    t->free_bytes += malloc_usable_size(p);
    t->req_free += requested;
}

static void allocated(struct truth *t, void *p, size_t requested)
{
    t->alloc_calls++;
    t->alloc_bytes += malloc_usable_size(p);
    t->req_alloc += requested;
}

static void say(const char *cmd, const struct truth *t, int live_objs, unsigned long long live)
{
    pl_say("truth %s alloc_calls=%llu alloc_bytes=%llu free_calls=%llu free_bytes=%llu "
           "req_free_bytes=%llu live_objs=%d live_bytes=%llu req_alloc_bytes=%llu", cmd, t->alloc_calls,
           t->alloc_bytes, t->free_calls, t->free_bytes, t->req_free, live_objs, live, t->req_alloc);
}

__attribute__((noinline)) static int ex_seq(void)
{
    struct truth t = { 0 };
    void *a, *b, *c, *d = NULL, *e, *r;

    a = malloc(100);
    allocated(&t, a, 100);
    b = calloc(10, 30);
    allocated(&t, b, 300);
    freed(&t, a, 100);
    a = realloc(a, 5000); /* grow */
    allocated(&t, a, 5000);
    freed(&t, a, 5000);
    a = realloc(a, 200); /* shrink */
    allocated(&t, a, 200);
    c = realloc(NULL, 777); /* from NULL: an allocation only */
    allocated(&t, c, 777);
    freed(&t, c, 777);
    r = realloc(c, 0); /* to zero: a free only (glibc returns NULL) */
    if (r)
        return pl_say("realloc(p, 0) returned a block: not glibc's behaviour"), -1;
    if (posix_memalign(&d, 64, 1000))
        return pl_say("posix_memalign failed"), -1;
    allocated(&t, d, 1000);
    e = malloc(200000); /* above the mmap threshold */
    allocated(&t, e, 200000);
    freed(&t, e, 200000);
    e = realloc(e, 400000); /* mremap */
    allocated(&t, e, 400000);
    if (!a || !b || !d || !e)
        return pl_say("allocation failed"), -1;
    kept[0] = a, kept[1] = b, kept[2] = d, kept[3] = e;
    say("seq", &t, 4, 200 + 300 + 1000 + 400000);
    return 0;
}

__attribute__((noinline)) static int ex_release(void)
{
    static const size_t req[4] = { 200, 300, 1000, 400000 };
    struct truth t = { 0 };

    for (int i = 0; i < 4; i++) {
        freed(&t, kept[i], req[i]);
        free(kept[i]);
        kept[i] = NULL;
    }
    free(NULL);
    say("release", &t, 0, 0);
    return 0;
}

static int handler(const char *cmd, const char *arg)
{
    (void)arg;
    if (!strcmp(cmd, "seq") && !ex_seq())
        pl_say("done seq");
    else if (!strcmp(cmd, "release") && !ex_release())
        pl_say("done release");
    else
        return -1;
    return 0;
}

int main(void)
{
    return pl_serve(handler);
}
