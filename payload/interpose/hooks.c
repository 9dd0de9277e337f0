/* hooks.c - the functions patched GOT slots point to.
 *
 * Every hook calls its family's original first and only then accounts, so
 * the target's allocation is never delayed by a sample and never fails
 * because of us. The unsampled path is inline and keeps nothing on the
 * stack but malloc's size across the real call: 40 instructions a
 * malloc+free pair in all (callgrind, bench/hook_bench, `make bench`
 * section instructions; 116 before issue 17, floor 2), of which
 *   21  the hook bodies: the call (malloc) or jump (free) to the original,
 *       read from pl_families in place; the NULL tests; the TLS offset,
 *       the compare with the session key and the slot pointer; saving n;
 *   10  the exact calls and bytes per thread (thread.h): a test of the
 *       mmapped bit, a mask and two adds to memory each side;
 *    4  free's filter of sampled blocks (addrmap.h): shift, mask, compare
 *       the byte of the block's page in a table of counters;
 *    2  the chunk header word of the block (glibc, family.h);
 *    2  the session key load;
 *    1  the countdown: one subtract to memory (its branch is in the 21).
 * What went: the size histogram (22 with the counters) is filled by the
 * sampled path from the samples' weights; glibc's usable size is no longer
 * computed per call (the counters keep chunk sizes and the reader
 * subtracts the overhead); the hashed bitmap on free (19) became a
 * counter per page (addrmap.h); the family's glibc flag and the table
 * lookup of the original became constants of hooks made per family and
 * allocator kind; frame pointer and register saves went where tail calls
 * allow (NOFP below).
 * Everything that takes a lock or unwinds is out of line behind the
 * reentrancy guard. errno is preserved across every slow path (here and in
 * pl_thread_enter_slow); the fast path makes no call that could change it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "payload/record/record.h"
#include "payload/interpose/hooks.h"
#include "payload/interpose/allocstats.h"
#include "payload/interpose/family.h"
#include "payload/interpose/hooks_floor.h"
#include "payload/interpose/after_sample.h"

int pl_after_sample_due;
void (*pl_after_sample)(void);

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define INLINE static inline __attribute__((always_inline))

/* Hooks without a frame pointer: a push, a move and a pop less in each.
 * The stack walk (stack.c) follows the payload's own frames by their
 * frame pointers up to the first return address outside the payload, so
 * such a hook must never be on the stack under the sampled path: each of
 * them reaches pl_sample_take (directly or through on_alloc_slow) only by
 * a tail call (`return on_alloc(...)`), which leaves the stack as if the
 * program had called pl_sample_take itself. Hooks that cannot (realloc's,
 * posix_memalign's) keep their frame pointer. The FP argument that runs
 * down the inline helpers says which kind of hook the code is in; should
 * a compiler not make the call a tail call, pl_sample_take sees a return
 * address inside the payload with FP 0 and walks every frame by its CFI
 * rule instead (pl_stack_capture_unwind: right, only slower). */
#define NOFP __attribute__((optimize("omit-frame-pointer")))

/* The hooks exist twice per family: G = 1 for a family whose blocks are
 * glibc's (the exact counts take the chunk header word, one load), G = 0
 * for any other allocator (its malloc_usable_size, or nothing). G is a
 * constant in each hook, so neither the test nor the other branch is
 * there at run time. */

/* What the exact counts take of a block, read while it is valid: glibc's
 * header word, or the usable size (`none` when the allocator has no
 * malloc_usable_size: requested bytes for an allocation, 0 for a free,
 * so freed bytes never exceed allocated ones). */
INLINE uint64_t measure(int G, const struct pl_family *f, void *p, uint64_t none)
{
    if (G)
        return pl_glibc_header(p);
    return f->usable ? f->usable(p) : none;
}

INLINE uint64_t measure_usable(int G, uint64_t m)
{
    return G ? pl_glibc_usable_of(m) : m;
}

INLINE void tally(int G, struct pl_tally *s, uint64_t m)
{
    if (G)
        pl_tally_chunk(s, m);
    else
        pl_tally_usable(s, m);
}

/* The sampled path: weights, histogram, next countdown, stack, bucket,
 * address map. fam is p's family (its usable size goes in the histogram);
 * fp: the caller and every payload frame under it keep a frame pointer
 * (see NOFP). Returns p. */
static __attribute__((noinline, cold)) void *pl_sample_take(void *p, uint64_t n, int fam, int fp)
{
    const struct pl_family *f = &pl_families[fam];
    struct pl_tls *t = &pl_tls;
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    if (!pl_busy_enter()) { /* off meanwhile (a filter on its way): no sample */
        pl_guard_leave(t, k);
        errno = saved_errno;
        return p;
    }
    uint32_t head = pl_addrmap_prefetch_insert(p); /* arrives while we unwind */
    uint64_t est_bytes, est_objs;
    pl_sample_weight(n, t->smp.rate, &est_bytes, &est_objs);
    t->smp.countdown = pl_sample_next_interval(&t->smp);
    /* measured again here: the fast path keeps no copy of its measure */
    uint64_t usable = f->glibc ? pl_glibc_usable(p) : measure(0, f, p, n);
    pl_thread_hist_sample(t->self, n, usable, est_objs);

    uintptr_t pcs[HI_MAX_FRAMES];
    int sound = fp || !pl_stack_in_payload((uintptr_t)__builtin_return_address(0));
    uint32_t nf = sound ? pl_stack_capture(pcs, HI_MAX_FRAMES)
                        : pl_stack_capture_unwind(pcs, HI_MAX_FRAMES); /* a NOFP hook called us */
    int32_t b = pl_bucket_intern(pl_stack_hash(pcs, nf), pcs, nf, t->self ? t->self->tid : 0);
    if (b < 0) {
        __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&pl_walks_unkept, 1, __ATOMIC_RELAXED);
    } else {
        struct pl_live e = { (uintptr_t)p, n, est_bytes, est_objs, pl_sample_time_ns(), b, 0 }, stale;
        int r = pl_addrmap_insert_at(head, &e, &stale);
        if (r == 1)
            pl_bucket_sub_live(stale.bucket, stale.size, stale.est_bytes, stale.est_objs_fp);
        pl_bucket_add(b, n, est_bytes, est_objs, r >= 0);
        if (r < 0)
            __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
    }
    pl_busy_leave();
    /* Still inside the guard: pthread_create's allocations are forwarded. */
    if (UNLIKELY(__atomic_load_n(&pl_after_sample_due, __ATOMIC_ACQUIRE)))
        pl_after_sample();
    pl_guard_leave(t, k);
    errno = saved_errno;
    return p;
}

/* Takes p (its chain head: head) out of the address map; 1 and *e if it
 * was a live sample. */
static __attribute__((noinline)) int pl_take_sampled(struct pl_tls *t, void *p, uint32_t head, struct pl_live *e)
{
    uint64_t k = pl_guard_enter(t);
    int found = pl_addrmap_take_at(head, p, e);
    pl_guard_leave(t, k);
    return found;
}

/* realloc failed: the old block is still live, put its entry back. */
__attribute__((noinline)) void pl_restore_sampled(struct pl_tls *t, const struct pl_live *e)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    struct pl_live stale;
    int r = pl_addrmap_insert(e, &stale);
    if (r == 1)
        pl_bucket_sub_live(stale.bucket, stale.size, stale.est_bytes, stale.est_objs_fp);
    if (r < 0) {
        pl_bucket_sub_live(e->bucket, e->size, e->est_bytes, e->est_objs_fp);
        __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
    }
    pl_guard_leave(t, k);
    errno = saved_errno;
}

/* An allocation of n bytes at p (measure m) in the given mode. */
/* An allocation of n bytes at p (measure m) in the given mode; returns p,
 * so that a hook's last act can be a jump here or to the sampled path. */
INLINE void *account_alloc(int G, int FP, int fam, struct pl_tls *t, int mode, void *p, uint64_t n,
                           uint64_t m)
{
    if (LIKELY(mode == PL_ENTER_FAST)) {
        tally(G, &t->self->c.alloc, m);
        if (UNLIKELY(pl_sample_step(&t->smp, n)))
            return pl_sample_take(p, n, fam, FP);
    } else if (mode == PL_ENTER_AGGREGATE) {
        pl_thread_aggregate_alloc(n, measure_usable(G, m));
    }
    return p;
}

/* Not attached on the fast path's terms (no slot yet, new session or
 * rate, nested, detached): the full decision, out of line. Returns p. */
static __attribute__((noinline)) void *on_alloc_slow(void *p, uint64_t n, int fam, int fp)
{
    /* framed itself: the chain under it is sound if its caller's is, or if
     * the caller jumped here (then the program called us, in effect) */
    int FP = fp || !pl_stack_in_payload((uintptr_t)__builtin_return_address(0));
    const struct pl_family *f = &pl_families[fam];
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter_slow(t);
    if (mode == PL_ENTER_FORWARD)
        return p;
    if (UNLIKELY(__atomic_load_n(&pl_allocstats_handoff, __ATOMIC_RELAXED)))
        pl_allocstats_serve(); /* after the real call: outside the allocator */
    if (f->glibc)
        return account_alloc(1, FP, fam, t, mode, p, n, measure(1, f, p, n));
    return account_alloc(0, FP, fam, t, mode, p, n, measure(0, f, p, n));
}

/* The allocation fast path, after the real allocation: the key compare,
 * the measure (for glibc one load of the header malloc has just written),
 * two counter adds and the countdown step. Exact bytes are usable bytes,
 * as for frees; sampling and estimates stay in requested bytes. Every way
 * out is a return or a jump (no frame of the hook stays on the stack
 * under the slow and sampled paths, which unwind from where they are).
 * Returns p. */
INLINE void *on_alloc(int G, int FP, void *p, uint64_t n, int F)
{
    const struct pl_family *f = &pl_families[F];
    if (UNLIKELY(!p))
        return p;
    struct pl_tls *t = &pl_tls;
    if (UNLIKELY(t->key != pl_key_load()))
        return on_alloc_slow(p, n, F, FP);
    return account_alloc(G, FP, F, t, PL_ENTER_FAST, p, n, measure(G, f, p, n));
}

typedef void (*pl_free_fn)(void *);

/* A block whose filter counter is set and whose chain (head) is not
 * empty is being freed (it may be a live sample). */
static __attribute__((noinline)) void free_sampled(struct pl_tls *t, void *p, uint32_t head)
{
    struct pl_live e;
    if (pl_take_sampled(t, p, head, &e))
        pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
}

/* The same, then the real free (*fn): the hook jumps here. Most blocks
 * that come here only share a page with a live sample: their empty chain
 * sends them on to the real free without the guard and the lock (at the
 * default rate, 4.5 such frees per sample in bench/hook_bench). */
static __attribute__((noinline)) void free_sampled_locked_then(void *p, void *const *fn, uint32_t head)
{
    free_sampled(&pl_tls, p, head);
    ((pl_free_fn)*fn)(p);
}

/* NOFP, and only jumps on: no frame of its own, 7 instructions fewer a
 * rejected block (it never runs under the sampled path). */
NOFP static __attribute__((noinline)) void free_sampled_then(void *p, void *const *fn)
{
    uint32_t head = pl_addr_head_of((uintptr_t)p);
    if (pl_addrmap_chain_at(head))
        free_sampled_locked_then(p, fn, head);
    else
        ((pl_free_fn)*fn)(p);
}

/* The free slow path (see on_alloc_slow), then the real free (*fn). */
static __attribute__((noinline)) void on_free_slow_then(void *p, int fam, void *const *fn)
{
    const struct pl_family *f = &pl_families[fam];
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter_slow(t);
    if (mode != PL_ENTER_FORWARD) {
        if (UNLIKELY(__atomic_load_n(&pl_allocstats_handoff, __ATOMIC_RELAXED)))
            pl_allocstats_serve(); /* before the real free: outside the allocator */
        if (mode == PL_ENTER_FAST) {
            if (f->glibc)
                tally(1, &t->self->c.free, measure(1, f, p, 0));
            else
                tally(0, &t->self->c.free, measure(0, f, p, 0));
        } else {
            pl_thread_aggregate_free(f->glibc ? pl_glibc_usable(p) : measure(0, f, p, 0));
        }
        if (pl_addrmap_maybe(p) && pl_addrmap_chain_maybe(p))
            free_sampled(t, p, pl_addr_head_of((uintptr_t)p));
    }
    ((pl_free_fn)*fn)(p);
}

/* free(p) through *fn, the family's original: count it, and drop a
 * sampled block from the map first (before, so a block reused by another
 * thread at once is not removed). The fast path is the key compare, the
 * measure (one load of the header free() reads next anyway, for glibc),
 * two counter adds and one load of the filter; it keeps nothing on the
 * stack and ends in a jump to the real free. */
INLINE void do_free(int G, void *p, int F, void *const *fn)
{
    const struct pl_family *f = &pl_families[F];
    if (LIKELY(p != NULL)) {
        struct pl_tls *t = &pl_tls;
        if (UNLIKELY(t->key != pl_key_load())) {
            on_free_slow_then(p, F, fn);
            return;
        }
        tally(G, &t->self->c.free, measure(G, f, p, 0));
        if (UNLIKELY(pl_addrmap_maybe(p))) {
            free_sampled_then(p, fn);
            return;
        }
    }
    ((pl_free_fn)*fn)(p);
}

typedef void *(*pl_realloc_fn)(void *, size_t);

INLINE void *do_realloc(int G, void *(*call)(void *, size_t, size_t, void *), void *fn,
                        int F, void *old, size_t a, size_t b, uint64_t n)
{
    const struct pl_family *f = &pl_families[F];
    if (!old)
        return on_alloc(G, 1, call(NULL, a, b, fn), n, F);
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode == PL_ENTER_FORWARD)
        return call(old, a, b, fn);
    uint64_t m_old = measure(G, f, old, 0);
    struct pl_live e;
    int had = UNLIKELY(pl_addrmap_maybe(old)) && pl_addrmap_chain_maybe(old)
                  ? pl_take_sampled(t, old, pl_addr_head_of((uintptr_t)old), &e)
                  : 0;
    void *p = call(old, a, b, fn);
    if (!p && n != 0) { /* failed: old is untouched and still live */
        if (had)
            pl_restore_sampled(t, &e);
        return NULL;
    }
    if (had)
        pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
    if (LIKELY(mode == PL_ENTER_FAST))
        tally(G, &t->self->c.free, m_old);
    else
        pl_thread_aggregate_free(measure_usable(G, m_old));
    if (p)
        return account_alloc(G, 1, F, t, mode, p, n, measure(G, f, p, n));
    return p;
}

static inline __attribute__((always_inline)) void *call_realloc(void *old, size_t a, size_t b, void *fn)
{
    (void)b;
    return ((void *(*)(void *, size_t))fn)(old, a);
}

/* glibc's reallocarray calls realloc through libc's own (patched) slot:
 * the guard keeps that inner call from being counted a second time. */
static inline __attribute__((always_inline)) void *call_reallocarray(void *old, size_t a, size_t b, void *fn)
{
    struct pl_tls *t = &pl_tls;
    uint64_t k = pl_guard_enter(t);
    void *p = ((void *(*)(void *, size_t, size_t))fn)(old, a, b);
    pl_guard_leave(t, k);
    return p;
}

/* A plain load (the call can then read it from memory itself): orig[] is
 * written once, before the first slot points at a hook that reads it. */
#define ORIG(F, FN) (pl_families[F].orig[FN])

#define PL_FAMILY_HOOKS(F, G)                                                                             \
    NOFP static void *hook_malloc_##F##_##G(size_t n)                                                          \
    {                                                                                                     \
        return on_alloc(G, 0, ((void *(*)(size_t))ORIG(F, PL_F_MALLOC))(n), n, F);             \
    }                                                                                                     \
    NOFP static void hook_free_##F##_##G(void *p)                                                              \
    {                                                                                                     \
        do_free(G, p, F, &ORIG(F, PL_F_FREE));                                              \
    }                                                                                                     \
    NOFP static void *hook_calloc_##F##_##G(size_t a, size_t b)                                                \
    {                                                                                                     \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_CALLOC))(a, b);                                \
        return on_alloc(G, 0, p, (uint64_t)a * b, F);                                          \
    }                                                                                                     \
    static void *hook_realloc_##F##_##G(void *old, size_t n)                                              \
    {                                                                                                     \
        return do_realloc(G, call_realloc, ORIG(F, PL_F_REALLOC), F, old, n, 0, n);         \
    }                                                                                                     \
    static void *hook_reallocarray_##F##_##G(void *old, size_t a, size_t b)                               \
    {                                                                                                     \
        size_t n;                                                                                         \
        void *fn = ORIG(F, PL_F_REALLOCARRAY);                                                            \
        if (__builtin_mul_overflow(a, b, &n))                                                             \
            return call_reallocarray(old, a, b, fn); /* fails with ENOMEM, old untouched */               \
        return do_realloc(G, call_reallocarray, fn, F, old, a, b, n);                       \
    }                                                                                                     \
    static int hook_posix_memalign_##F##_##G(void **out, size_t al, size_t n)                             \
    {                                                                                                     \
        int r = ((int (*)(void **, size_t, size_t))ORIG(F, PL_F_POSIX_MEMALIGN))(out, al, n);             \
        if (r == 0)                                                                                       \
            on_alloc(G, 1, *out, n, F);                                                        \
        return r;                                                                                         \
    }                                                                                                     \
    NOFP static void *hook_aligned_alloc_##F##_##G(size_t al, size_t n)                                        \
    {                                                                                                     \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_ALIGNED_ALLOC))(al, n);                        \
        return on_alloc(G, 0, p, n, F);                                                        \
    }                                                                                                     \
    NOFP static void *hook_memalign_##F##_##G(size_t al, size_t n)                                             \
    {                                                                                                     \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_MEMALIGN))(al, n);                             \
        return on_alloc(G, 0, p, n, F);                                                        \
    }                                                                                                     \
    NOFP static void *hook_valloc_##F##_##G(size_t n)                                                          \
    {                                                                                                     \
        return on_alloc(G, 0, ((void *(*)(size_t))ORIG(F, PL_F_VALLOC))(n), n, F);             \
    }                                                                                                     \
    NOFP static void *hook_pvalloc_##F##_##G(size_t n)                                                         \
    {                                                                                                     \
        return on_alloc(G, 0, ((void *(*)(size_t))ORIG(F, PL_F_PVALLOC))(n), n, F);            \
    }

PL_FAMILY_HOOKS(0, 0)
PL_FAMILY_HOOKS(0, 1)
PL_FAMILY_HOOKS(1, 0)
PL_FAMILY_HOOKS(1, 1)
PL_FAMILY_HOOKS(2, 0)
PL_FAMILY_HOOKS(2, 1)
PL_FAMILY_HOOKS(3, 0)
PL_FAMILY_HOOKS(3, 1)

#define PL_HOOK_ROW(F, G)                                                                                     \
    {                                                                                                         \
        [PL_F_MALLOC] = (uintptr_t)hook_malloc_##F##_##G, [PL_F_FREE] = (uintptr_t)hook_free_##F##_##G,       \
        [PL_F_CALLOC] = (uintptr_t)hook_calloc_##F##_##G, [PL_F_REALLOC] = (uintptr_t)hook_realloc_##F##_##G, \
        [PL_F_REALLOCARRAY] = (uintptr_t)hook_reallocarray_##F##_##G,                                         \
        [PL_F_POSIX_MEMALIGN] = (uintptr_t)hook_posix_memalign_##F##_##G,                                     \
        [PL_F_ALIGNED_ALLOC] = (uintptr_t)hook_aligned_alloc_##F##_##G,                                       \
        [PL_F_MEMALIGN] = (uintptr_t)hook_memalign_##F##_##G, [PL_F_VALLOC] = (uintptr_t)hook_valloc_##F##_##G,\
        [PL_F_PVALLOC] = (uintptr_t)hook_pvalloc_##F##_##G,                                                   \
    }

_Static_assert(PL_MAX_FAMILIES == 4, "one PL_FAMILY_HOOKS per family");

/* [family][glibc][func] */
static const uintptr_t pl_hooks[PL_MAX_FAMILIES][2][PL_F_MALLOC_COUNT] = {
    { PL_HOOK_ROW(0, 0), PL_HOOK_ROW(0, 1) },
    { PL_HOOK_ROW(1, 0), PL_HOOK_ROW(1, 1) },
    { PL_HOOK_ROW(2, 0), PL_HOOK_ROW(2, 1) },
    { PL_HOOK_ROW(3, 0), PL_HOOK_ROW(3, 1) },
};

uintptr_t pl_hook_addr(int family, unsigned func)
{
    if (pl_func_is_map(func))
        return pl_hook_map_addr(family, func);
    if (func == PL_F_DLSYM || func == PL_F_DLVSYM)
        return pl_hook_dlsym_addr(family, func);
    if (pl_func_is_sandbox(func))
        return pl_hook_sandbox_addr(family, func);
    if (pl_hooks_floor) /* bench only: forward, account nothing */
        return pl_hook_floor_addr(family, func);
    return func < PL_F_MALLOC_COUNT ? pl_hooks[family][pl_families[family].glibc != 0][func] : 0;
}
