/* payload_record_stack.c - the payload's stack walk (payload/record/cfi.h, stack.c) gives
 * exactly the stack of an independent unwinder, glibc's backtrace() (which
 * runs libgcc's DWARF unwinder): through frames with and without frame
 * pointers (libc's qsort and bsearch), deep recursion, other threads
 * (clone3 at the bottom), the main thread (_start), signal handlers on the
 * thread's stack and on an alternate signal stack (the kernel's frame),
 * and a first walk deeper than the span learnt. Where libgcc stops (a
 * frame with no CFI) it goes on by the frame pointer as libunwind did, and
 * where that does not hold either it ends the stack and counts it. */
#include <criterion/criterion.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "payload/record/cfi.h"
#include "payload/record/stack.h"

#define MAXF 64

struct pair {
    uintptr_t ours[MAXF], ref[MAXF];
    uint32_t nours, nref;
};

static __thread struct pair *cur;
static unsigned captures;

/* Captures both ways from the same frame. The test executable holds the
 * payload's objects, so the walk drops its leading frames; so does this
 * for backtrace's (they are the same frames). */
__attribute__((noinline)) static void capture_both(void)
{
    cur->nours = pl_stack_capture(cur->ours, MAXF);
    captures++;
    void *bt[MAXF + 16];
    int n = backtrace(bt, MAXF + 16);
    int skip = 0;
    while (skip < n && pl_stack_in_payload((uintptr_t)bt[skip]))
        skip++;
    cur->nref = 0;
    for (int i = skip; i < n && cur->nref < MAXF; i++)
        cur->ref[cur->nref++] = (uintptr_t)bt[i];
    __asm__ volatile("" ::: "memory");
}

static void expect_same(const struct pair *p, const char *what)
{
    cr_expect_eq(p->nours, p->nref, "%s: %u frames vs backtrace's %u", what, p->nours, p->nref);
    for (uint32_t i = 0; i < p->nref && i < p->nours; i++)
        cr_expect_eq(p->ours[i], p->ref[i], "%s: frame %u: %#lx vs %#lx", what, i, (unsigned long)p->ours[i],
                     (unsigned long)p->ref[i]);
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
    cr_expect_gt(p.nref, 3);
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
    cr_expect_eq(p.nours, MAXF);
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
    cr_expect_gt(p.nref, 3);
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
    int v[3] = { 3, 1, 2 }; /* a libc frame between the handler and the capture */
    qsort(v, 3, sizeof(int), cmp_int);
}

/* Raised from a known function, so the interrupted frames can be checked. */
__attribute__((noinline)) static void raise_here(int sig)
{
    raise(sig);
    __asm__ volatile("" ::: "memory");
}

static void expect_through_signal(const char *what)
{
    expect_same(&sig_pair, what);
    /* frames on both sides of the kernel's frame: the handler's qsort
     * and, after the trampoline, raise() and raise_here's caller */
    cr_expect_gt(sig_pair.nref, 6, "%s: %u frames", what, sig_pair.nref);
    int after_restorer = 0;
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    for (uint32_t i = 0; i + 1 < sig_pair.nours; i++)
        if (sig_pair.ours[i] == (uintptr_t)sa.sa_restorer)
            after_restorer = 1;
    cr_expect(after_restorer, "%s: the signal trampoline is not among the frames", what);
}

Test(stack, signal_handler, .init = setup)
{
    signal(SIGUSR1, on_signal);
    raise_here(SIGUSR1);
    expect_through_signal("signal handler");
}

Test(stack, signal_handler_on_alternate_stack, .init = setup)
{
    static char alt[64 * 1024] __attribute__((aligned(16)));
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
    cr_assert_eq(sigaltstack(&ss, NULL), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    struct pair warm;
    cur = &warm;
    recurse(2); /* the thread's span is learnt on its own stack first */
    for (int i = 0; i < 2; i++) {
        raise_here(SIGUSR1);
        expect_through_signal("alternate stack");
    }
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
    /* libc's signal trampoline, as a return address and cached */
    signal(SIGUSR2, SIG_IGN);
    struct sigaction sa;
    sigaction(SIGUSR2, NULL, &sa);
    cr_assert(sa.sa_restorer != NULL);
    pl_cfi_rule_uncached((uintptr_t)sa.sa_restorer, &r);
    cr_expect_eq(r.kind, PL_CFI_SIGNAL);
    pl_cfi_rule((uintptr_t)sa.sa_restorer, &r);
    cr_expect_eq(r.kind, PL_CFI_SIGNAL);
    pl_cfi_rule((uintptr_t)sa.sa_restorer, &r);
    cr_expect_eq(r.kind, PL_CFI_SIGNAL);
}

/* A thread learns its stack span at its first complete walk; a later,
 * deeper walk reads below it through the kernel's check, and is right. */
Test(stack, deeper_than_first_walk, .init = setup)
{
    struct pair p;
    cur = &p;
    recurse(1); /* shallow: learns the span from here */
    expect_same(&p, "shallow");
    for (int i = 0; i < 3; i++) {
        recurse(60);
        expect_same(&p, "deeper");
    }
}

/* Frames with no CFI at all (hand-written assembly, JIT code): one with a
 * frame pointer, one that leaves rbp 0. */
void nocfi_fp(void (*fn)(void));
void nocfi_nofp(void (*fn)(void));
__asm__(".text\n"
        ".globl nocfi_fp\n.type nocfi_fp,@function\n"
        "nocfi_fp:\n push %rbp\n mov %rsp,%rbp\n call *%rdi\n pop %rbp\n ret\n"
        ".size nocfi_fp,.-nocfi_fp\n"
        ".globl nocfi_nofp\n.type nocfi_nofp,@function\n"
        "nocfi_nofp:\n push %rbp\n xor %ebp,%ebp\n call *%rdi\n pop %rbp\n ret\n"
        ".size nocfi_nofp,.-nocfi_nofp\n");

static void sort_some(void)
{
    int v[3] = { 3, 1, 2 };
    qsort(v, 3, sizeof(int), cmp_int);
}

__attribute__((noinline)) static void call_nocfi_fp(void)
{
    nocfi_fp(sort_some);
    __asm__ volatile("" ::: "memory");
}

Test(stack, no_cfi_frame_by_its_frame_pointer, .init = setup)
{
    struct pair p;
    cur = &p;
    call_nocfi_fp();
    /* backtrace (libgcc) ends at the frame without CFI; ours goes on */
    cr_assert_gt(p.nref, 2);
    cr_assert_gt(p.nours, p.nref, "%u frames vs backtrace's %u", p.nours, p.nref);
    for (uint32_t i = 0; i < p.nref; i++)
        cr_expect_eq(p.ours[i], p.ref[i], "frame %u: %#lx vs %#lx", i, (unsigned long)p.ours[i],
                     (unsigned long)p.ref[i]);
    /* the frame after nocfi_fp's is the return into call_nocfi_fp */
    uintptr_t ra = p.ours[p.nref];
    cr_expect(ra > (uintptr_t)&call_nocfi_fp && ra < (uintptr_t)&call_nocfi_fp + 64, "%#lx", (unsigned long)ra);
}

Test(stack, no_cfi_no_frame_pointer_ends_and_counts, .init = setup)
{
    struct pair p;
    cur = &p;
    uint64_t before = __atomic_load_n(&pl_stack_truncated, __ATOMIC_RELAXED);
    unsigned before_captures = captures;
    nocfi_nofp(sort_some);
    expect_same(&p, "no frame pointer");
    cr_expect_gt(p.nref, 2);
    /* every walk from the comparator (qsort calls it more than once) */
    cr_expect_gt(captures, before_captures);
    cr_expect_eq(__atomic_load_n(&pl_stack_truncated, __ATOMIC_RELAXED) - before, captures - before_captures);
}

/* Deeper than a learning walk goes (PL_LEARN_FRAMES, 512): the span is
 * never learnt from there, every walk reads through the kernel's check,
 * and stays right. */
static struct pair deep_pair;

Test(stack, deeper_than_learning_goes, .init = setup)
{
    struct pair *p0 = &deep_pair;
    cur = p0;
    for (int i = 0; i < 3; i++) {
        recurse(700);
        expect_same(p0, "very deep");
        cr_expect_eq(p0->nours, MAXF);
    }
}
