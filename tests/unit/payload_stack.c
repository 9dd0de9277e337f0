/* payload_stack.c - the cached CFI walk (payload/cfi.h, stack.c) gives
 * exactly libunwind's stack, or declines: through frames with and without
 * frame pointers (libc's qsort and bsearch), deep recursion, other threads
 * (clone3 at the bottom), the main thread (_start), and a signal handler
 * (declined: libunwind knows the kernel's signal frame). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "payload/cfi.h"
#include "payload/stack.h"

#define MAXF 64

struct pair {
    uintptr_t cfi[MAXF], unw[MAXF];
    int ncfi;
    uint32_t nunw;
};

static __thread struct pair *cur;

/* Captures both ways from the same frame (the test executable holds the
 * payload's objects, so its leading frames are dropped by both). */
__attribute__((noinline)) static void capture_both(void)
{
    cur->ncfi = pl_stack_capture_cfi(cur->cfi, MAXF);
    cur->nunw = pl_stack_capture_unwind(cur->unw, MAXF);
    __asm__ volatile("" ::: "memory");
}

static void expect_same(const struct pair *p, const char *what)
{
    cr_assert_geq(p->ncfi, 0, "%s: the CFI walk declined", what);
    cr_expect_eq((uint32_t)p->ncfi, p->nunw, "%s: %d frames vs libunwind's %u", what, p->ncfi, p->nunw);
    for (uint32_t i = 0; i < p->nunw && i < (uint32_t)p->ncfi; i++)
        cr_expect_eq(p->cfi[i], p->unw[i], "%s: frame %u: %#lx vs %#lx", what, i, (unsigned long)p->cfi[i],
                     (unsigned long)p->unw[i]);
}

static void setup(void)
{
    cr_assert_eq(pl_stack_init(), 0);
}

static int cmp_int(const void *a, const void *b)
{
    capture_both();
    return *(const int *)a - *(const int *)b;
}

Test(stack, through_libc_qsort, .init = setup)
{
    struct pair p;
    cur = &p;
    int v[4] = { 4, 2, 3, 1 };
    qsort(v, 4, sizeof(int), cmp_int); /* the comparator runs inside libc's msort */
    expect_same(&p, "qsort");
    cr_expect_gt(p.nunw, 3);
    bsearch(&v[2], v, 4, sizeof(int), cmp_int);
    expect_same(&p, "bsearch");
}

__attribute__((noinline)) static int recurse(int depth)
{
    if (depth == 0) {
        int v[3] = { 3, 1, 2 };
        qsort(v, 3, sizeof(int), cmp_int);
        return v[0];
    }
    int r = recurse(depth - 1) + 1;
    __asm__ volatile("" ::: "memory");
    return r;
}

Test(stack, deep_recursion_truncated_alike, .init = setup)
{
    struct pair p;
    cur = &p;
    recurse(100); /* more frames than MAXF */
    expect_same(&p, "recursion");
    cr_expect_eq(p.nunw, MAXF);
}

static void *thread_main(void *arg)
{
    struct pair *p = arg;
    cur = p;
    recurse(3);
    return NULL;
}

Test(stack, other_thread_ends_at_clone, .init = setup)
{
    struct pair p;
    pthread_t th;
    pthread_create(&th, NULL, thread_main, &p);
    pthread_join(th, NULL);
    expect_same(&p, "thread");
}

Test(stack, cached_rules_stay_right, .init = setup)
{
    struct pair p;
    cur = &p;
    for (int i = 0; i < 3; i++) { /* the first walk fills the cache, later ones read it */
        recurse(5);
        expect_same(&p, "repeat");
    }
    pl_cfi_flush();
    recurse(5);
    expect_same(&p, "after flush");
}

static struct pair sig_pair;

static void on_signal(int sig)
{
    (void)sig;
    cur = &sig_pair;
    capture_both();
}

Test(stack, signal_handler_declined, .init = setup)
{
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    cr_expect_eq(sig_pair.ncfi, -1, "a walk through the kernel's signal frame must be left to libunwind");
    cr_expect_gt(sig_pair.nunw, 2);
    /* and pl_stack_capture falls back to exactly libunwind's answer */
    uintptr_t a[MAXF];
    uint32_t n = pl_stack_capture(a, MAXF);
    cr_expect_gt(n, 0);
}

Test(stack, rules_of_known_shapes, .init = setup)
{
    struct pl_cfi_rule r;
    /* a return address inside recurse() (frame pointer, -O2) */
    pl_cfi_rule_uncached((uintptr_t)&recurse + 8, &r);
    cr_expect(r.kind == PL_CFI_FP || r.kind == PL_CFI_SP, "kind %u", r.kind);
    pl_cfi_rule_uncached(1, &r);
    cr_expect_eq(r.kind, PL_CFI_OTHER);
    pl_cfi_rule_uncached((uintptr_t)&sig_pair, &r); /* data, not code */
    cr_expect_eq(r.kind, PL_CFI_OTHER);
}

/* A thread learns its stack span at its first walk; a later, deeper walk
 * is left to libunwind until the span is learnt again, and is right then. */
Test(stack, deeper_than_first_walk, .init = setup)
{
    struct pair p;
    cur = &p;
    recurse(1); /* shallow: learns the span from here */
    expect_same(&p, "shallow");
    int walked = 0;
    for (int i = 0; i < 200 && !walked; i++) {
        recurse(60);
        if (p.ncfi >= 0) {
            expect_same(&p, "deeper");
            walked = 1;
        } else {
            cr_expect_gt(p.nunw, 60);
        }
    }
    cr_expect(walked, "the CFI walk never learnt the deeper span");
}
