/* alloc.c - the wrappers in front of CPython's MEM and OBJ domains (alloc.h).
 *
 * Every wrapper calls the allocator that was there (its domain's `old`)
 * and only then accounts, as the malloc hooks do: the block is never
 * delayed or refused because of us, and a block made before attach is
 * freed by the allocator that made it (the wrapper does not look at it).
 * The callers hold the GIL, so at most one thread is in these domains at a
 * time; the wrappers do not rely on it (they use the same per-thread state
 * and locks as the malloc hooks).
 *
 * Which blocks are pymalloc's own: pymalloc serves 1 to 512 bytes
 * (SMALL_REQUEST_THRESHOLD, 3.8 to 3.13) and hands 0 bytes and larger
 * requests to PyMem_RawMalloc, that is to malloc, whose hooks count them.
 * So malloc and calloc are accounted here only for 1 to 512 bytes. A
 * realloc of a block that was malloc's stays malloc's even when it
 * shrinks below 512: a realloc is accounted here only if no allocation
 * went through this thread's malloc hooks meanwhile (their exact counter
 * did not move). Either way a block is in one view, never two. (A new
 * arena's bookkeeping that reallocs through malloc during a small
 * realloc: that one block goes unsampled, rare.)
 *
 * Frees: a block's live sample is taken out of the address map whichever
 * kind it has (a large PyObject_Free frees a malloc block whose sample the
 * malloc hooks made; the free hook behind us then finds nothing left).
 */
#include "payload/interpose/pymalloc.h"

#include <errno.h>

#include "payload/interpose/hooks.h"
#include "payload/record/record.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#define PL_PYM_SMALL 512u /* pymalloc's SMALL_REQUEST_THRESHOLD */

struct pl_pym_domain pl_pym_mem, pl_pym_obj;

/* Wrappers without a frame pointer (hooks.c's NOFP: a push, a move and a
 * pop less): malloc, calloc and free reach the sampled path only by a
 * tail call, which leaves the stack as if libpython had called it. */
#define NOFP __attribute__((optimize("omit-frame-pointer")))

/* The sampled path: weights, next countdown, stack, bucket of kind
 * pymalloc, address map. Reached by a tail call from a wrapper (its return
 * address is then libpython's: the frame-pointer walk is sound); should a
 * compiler not make it one, the return address is inside the payload and
 * every frame is walked by its CFI rule instead (right, only slower), as
 * hooks.c's pl_sample_take does. Returns p. */
static __attribute__((noinline, cold)) void *pym_sample(struct pl_tls *t, void *p, uint64_t n)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    if (!pl_busy_enter()) { /* off meanwhile (a filter on its way): no sample */
        pl_guard_leave(t, k);
        errno = saved_errno;
        return p;
    }
    uint32_t head = pl_addrmap_prefetch_insert(p);
    uint64_t est_bytes, est_objs;
    pl_sample_weight(n, t->smp.rate, &est_bytes, &est_objs);
    t->smp.countdown = pl_sample_next_interval(&t->smp);
    uintptr_t pcs[HI_MAX_FRAMES];
    uint32_t nf = pl_stack_in_payload((uintptr_t)__builtin_return_address(0)) ? pl_stack_capture_unwind(pcs, HI_MAX_FRAMES)
                                                                              : pl_stack_capture(pcs, HI_MAX_FRAMES);
    int32_t b = pl_bucket_intern_kind(pl_stack_hash(pcs, nf), pcs, nf, t->self ? t->self->tid : 0, HI_KIND_PYMALLOC);
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
    pl_guard_leave(t, k);
    errno = saved_errno;
    return p;
}

/* The countdown step of a block pymalloc served, on a thread in the fast
 * mode. */
static inline __attribute__((always_inline)) void *step(struct pl_tls *t, void *p, uint64_t n)
{
    if (UNLIKELY(pl_sample_step(&t->smp, n)))
        return pym_sample(t, p, n);
    return p;
}

/* After a malloc or calloc of n bytes that returned p. */
static inline __attribute__((always_inline)) void *on_alloc(void *p, size_t n)
{
    if (UNLIKELY(!p) || n - 1 >= PL_PYM_SMALL)
        return p;
    struct pl_tls *t = &pl_tls;
    if (UNLIKELY(t->key != pl_key_load()) && pl_thread_enter_slow(t) != PL_ENTER_FAST)
        return p;
    return step(t, p, n);
}

/* p's live sample (if any) out of the map: 1 and *e if there was one. */
static __attribute__((noinline)) int take_sampled(struct pl_tls *t, void *p, struct pl_live *e)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    int found = pl_addrmap_take_at(pl_addr_head_of((uintptr_t)p), p, e);
    pl_guard_leave(t, k);
    errno = saved_errno;
    return found;
}

/* Allocations this thread's malloc hooks counted so far (fast mode only:
 * t->self is valid). */
static inline uint64_t malloc_calls(const struct pl_tls *t)
{
    return t->self->c.alloc.calls + t->self->c.alloc.chunk_calls;
}

NOFP static void *w_malloc(void *ctx, size_t n)
{
    const struct pl_pym_domain *d = ctx;
    return on_alloc(d->old.malloc(d->old.ctx, n), n);
}

NOFP static void *w_calloc(void *ctx, size_t nelem, size_t elsize)
{
    const struct pl_pym_domain *d = ctx;
    size_t n;
    void *p = d->old.calloc(d->old.ctx, nelem, elsize);
    if (__builtin_mul_overflow(nelem, elsize, &n))
        return p; /* NULL: the allocator refused it */
    return on_alloc(p, n);
}

static void *w_realloc(void *ctx, void *old, size_t n)
{
    const struct pl_pym_domain *d = ctx;
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode == PL_ENTER_FORWARD)
        return d->old.realloc(d->old.ctx, old, n);
    struct pl_live e;
    int had = old && UNLIKELY(pl_addrmap_maybe(old)) && pl_addrmap_chain_maybe(old) ? take_sampled(t, old, &e) : 0;
    uint64_t before = mode == PL_ENTER_FAST ? malloc_calls(t) : 0;
    void *p = d->old.realloc(d->old.ctx, old, n);
    if (UNLIKELY(!p)) { /* failed (pymalloc's realloc never returns NULL for success): old is untouched */
        if (had)
            pl_restore_sampled(t, &e);
        return NULL;
    }
    if (had)
        pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
    if (mode != PL_ENTER_FAST || n - 1 >= PL_PYM_SMALL || malloc_calls(t) != before)
        return p; /* malloc's block (its hooks saw it), or a thread without a slot */
    return step(t, p, n);
}

/* A block whose page's filter counter is set (it may be a live sample),
 * then the real free: out of line, so that the wrapper's common path is a
 * test, a compare and a jump. */
static __attribute__((noinline)) void free_filtered(const struct pl_pym_domain *d, void *p)
{
    if (pl_addrmap_chain_maybe(p)) {
        struct pl_tls *t = &pl_tls;
        struct pl_live e;
        if (pl_thread_enter(t) != PL_ENTER_FORWARD && take_sampled(t, p, &e))
            pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
    }
    d->old.free(d->old.ctx, p);
}

NOFP static void w_free(void *ctx, void *p)
{
    const struct pl_pym_domain *d = ctx;
    if (p && UNLIKELY(pl_addrmap_maybe(p))) {
        free_filtered(d, p);
        return;
    }
    d->old.free(d->old.ctx, p);
}

struct pl_pym_allocator pl_pymalloc_wrapper(struct pl_pym_domain *d)
{
    return (struct pl_pym_allocator){ d, w_malloc, w_calloc, w_realloc, w_free };
}
