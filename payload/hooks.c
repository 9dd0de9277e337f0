/* hooks.c - the functions patched GOT slots point to.
 *
 * Every hook calls its family's original first and only then accounts, so
 * the target's allocation is never delayed by a sample and never fails
 * because of us. The unsampled path is inline: one TLS compare (thread.h),
 * two owner-only counter stores, one integer countdown step; free adds the
 * block's usable size (inline from glibc's chunk header, family.h, or the
 * allocator's malloc_usable_size) and one lock-free bitmap read
 * (addrmap.h). About 116 instructions a malloc+free pair in all
 * (callgrind, bench/hook_bench), 8 fewer since the usable size of a glibc
 * block is read inline instead of called.
 * Everything that takes a lock or unwinds is out of line behind the
 * reentrancy guard. errno is preserved across every slow path (here and in
 * pl_thread_enter_slow); the fast path makes no call that could change it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "payload/addrmap.h"
#include "payload/bucket.h"
#include "payload/family.h"
#include "payload/hooks_floor.h"
#include "payload/sample.h"
#include "payload/session.h"
#include "payload/stack.h"
#include "payload/thread.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The sampled path: weights, next countdown, stack, bucket, address map. */
static __attribute__((noinline, cold)) void pl_sample_take(struct pl_tls *t, void *p, uint64_t n)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    pl_addrmap_prefetch_insert(p); /* arrives while we unwind */
    uint64_t est_bytes, est_objs;
    pl_sample_weight(n, t->smp.rate, &est_bytes, &est_objs);
    t->smp.countdown = pl_sample_next_interval(&t->smp);

    uintptr_t pcs[HI_MAX_FRAMES];
    uint32_t nf = pl_stack_capture(pcs, HI_MAX_FRAMES);
    int32_t b = pl_bucket_intern(pl_stack_hash(pcs, nf), pcs, nf, t->self ? t->self->tid : 0);
    if (b < 0) {
        __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
    } else {
        struct pl_live e = { (uintptr_t)p, n, est_bytes, est_objs, pl_sample_time_ns(), b, 0 }, stale;
        int r = pl_addrmap_insert(&e, &stale);
        if (r == 1)
            pl_bucket_sub_live(stale.bucket, stale.size, stale.est_bytes, stale.est_objs_fp);
        pl_bucket_add(b, n, est_bytes, est_objs, r >= 0);
        if (r < 0)
            __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
    }
    pl_guard_leave(t, k);
    errno = saved_errno;
}

/* Takes p out of the address map; 1 and *e if it was a live sample. */
static __attribute__((noinline)) int pl_take_sampled(struct pl_tls *t, void *p, struct pl_live *e)
{
    uint64_t k = pl_guard_enter(t);
    int found = pl_addrmap_take(p, e);
    pl_guard_leave(t, k);
    return found;
}

/* realloc failed: the old block is still live, put its entry back. */
static __attribute__((noinline)) void pl_restore_sampled(struct pl_tls *t, const struct pl_live *e)
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

static inline __attribute__((always_inline)) void account_alloc(struct pl_tls *t, int mode, void *p, uint64_t n,
                                                                 const struct pl_family *f)
{
    if (LIKELY(mode == PL_ENTER_FAST)) {
        pl_thread_count_alloc(t->self, n, pl_family_alloc_bytes(f, p, n));
        if (UNLIKELY(pl_sample_step(&t->smp, n)))
            pl_sample_take(t, p, n);
    } else if (mode == PL_ENTER_AGGREGATE) {
        pl_thread_aggregate_alloc(n, pl_family_alloc_bytes(f, p, n));
    }
}

/* Not attached on the fast path's terms (no slot yet, new session or
 * rate, nested, detached): the full decision, out of line. */
static __attribute__((noinline)) void on_alloc_slow(void *p, uint64_t n, const struct pl_family *f)
{
    struct pl_tls *t = &pl_tls;
    account_alloc(t, pl_thread_enter_slow(t), p, n, f);
}

/* The allocation fast path: the key compare, the usable size (for glibc
 * one load of the header malloc has just written), two counter stores and
 * the countdown step; no call for glibc, so the compiler keeps it in a
 * handful of registers with no spills. Exact bytes are usable bytes, as
 * for frees; sampling and estimates stay in requested bytes. */
static inline __attribute__((always_inline)) void on_alloc(void *p, uint64_t n, const struct pl_family *f)
{
    if (UNLIKELY(!p))
        return;
    struct pl_tls *t = &pl_tls;
    if (LIKELY(t->key == pl_key_load())) {
        pl_thread_count_alloc(t->self, n, pl_family_alloc_bytes(f, p, n));
        if (UNLIKELY(pl_sample_step(&t->smp, n)))
            pl_sample_take(t, p, n);
        return;
    }
    on_alloc_slow(p, n, f);
}

/* A block that may be in the address map is being freed. */
static __attribute__((noinline)) void free_sampled(struct pl_tls *t, void *p)
{
    struct pl_live e;
    if (pl_take_sampled(t, p, &e))
        pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
}

static __attribute__((noinline)) void on_free_slow(void *p, const struct pl_family *f)
{
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter_slow(t);
    if (mode == PL_ENTER_FORWARD)
        return;
    uint64_t u = pl_family_usable(f, p);
    if (mode == PL_ENTER_FAST)
        pl_thread_count_free(t->self, u);
    else
        pl_thread_aggregate_free(u);
    if (pl_addrmap_maybe(p))
        free_sampled(t, p);
}

/* Before the real free: count it, and drop a sampled block from the map
 * (before, so a block reused by another thread at once is not removed).
 * The fast path is the key compare, the usable size (one load of the
 * header free() reads next anyway, for glibc), two counter stores and one
 * bitmap bit. */
static inline __attribute__((always_inline)) void on_free(void *p, const struct pl_family *f)
{
    struct pl_tls *t = &pl_tls;
    if (UNLIKELY(t->key != pl_key_load())) {
        on_free_slow(p, f);
        return;
    }
    int maybe = pl_addrmap_maybe(p);
    if (UNLIKELY(maybe))
        pl_addrmap_prefetch(p); /* overlaps the chunk header's miss */
    uint64_t u = pl_family_usable(f, p);
    pl_thread_count_free(t->self, u);
    if (UNLIKELY(maybe))
        free_sampled(t, p);
}

typedef void *(*pl_realloc_fn)(void *, size_t);

static inline __attribute__((always_inline)) void *do_realloc(void *(*call)(void *, size_t, size_t, void *),
                                                              void *fn, const struct pl_family *f,
                                                              void *old, size_t a, size_t b, uint64_t n)
{
    if (!old) {
        void *p = call(NULL, a, b, fn);
        on_alloc(p, n, f);
        return p;
    }
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode == PL_ENTER_FORWARD)
        return call(old, a, b, fn);
    uint64_t u = pl_family_usable(f, old);
    struct pl_live e;
    int had = UNLIKELY(pl_addrmap_maybe(old)) ? pl_take_sampled(t, old, &e) : 0;
    void *p = call(old, a, b, fn);
    if (!p && n != 0) { /* failed: old is untouched and still live */
        if (had)
            pl_restore_sampled(t, &e);
        return NULL;
    }
    if (had)
        pl_bucket_sub_live(e.bucket, e.size, e.est_bytes, e.est_objs_fp);
    if (LIKELY(mode == PL_ENTER_FAST))
        pl_thread_count_free(t->self, u);
    else
        pl_thread_aggregate_free(u);
    if (p)
        account_alloc(t, mode, p, n, f);
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

#define ORIG(F, FN) (__atomic_load_n(&pl_families[F].orig[FN], __ATOMIC_RELAXED))

#define PL_FAMILY_HOOKS(F)                                                                        \
    static void *hook_malloc_##F(size_t n)                                                        \
    {                                                                                             \
        void *p = ((void *(*)(size_t))ORIG(F, PL_F_MALLOC))(n);                                   \
        on_alloc(p, n, &pl_families[F]);                                                      \
        return p;                                                                                 \
    }                                                                                             \
    static void hook_free_##F(void *p)                                                            \
    {                                                                                             \
        if (p)                                                                                    \
            on_free(p, &pl_families[F]);                                                          \
        ((void (*)(void *))ORIG(F, PL_F_FREE))(p);                                                \
    }                                                                                             \
    static void *hook_calloc_##F(size_t a, size_t b)                                              \
    {                                                                                             \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_CALLOC))(a, b);                        \
        on_alloc(p, (uint64_t)a * b, &pl_families[F]);                                        \
        return p;                                                                                 \
    }                                                                                             \
    static void *hook_realloc_##F(void *old, size_t n)                                            \
    {                                                                                             \
        return do_realloc(call_realloc, ORIG(F, PL_F_REALLOC), &pl_families[F], old, n, 0, n);   \
    }                                                                                             \
    static void *hook_reallocarray_##F(void *old, size_t a, size_t b)                             \
    {                                                                                             \
        size_t n;                                                                                 \
        void *fn = ORIG(F, PL_F_REALLOCARRAY);                                                    \
        if (__builtin_mul_overflow(a, b, &n))                                                     \
            return call_reallocarray(old, a, b, fn); /* fails with ENOMEM, old untouched */      \
        return do_realloc(call_reallocarray, fn, &pl_families[F], old, a, b, n);                  \
    }                                                                                             \
    static int hook_posix_memalign_##F(void **out, size_t al, size_t n)                           \
    {                                                                                             \
        int r = ((int (*)(void **, size_t, size_t))ORIG(F, PL_F_POSIX_MEMALIGN))(out, al, n);     \
        if (r == 0)                                                                               \
            on_alloc(*out, n, &pl_families[F]);                                               \
        return r;                                                                                 \
    }                                                                                             \
    static void *hook_aligned_alloc_##F(size_t al, size_t n)                                      \
    {                                                                                             \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_ALIGNED_ALLOC))(al, n);                \
        on_alloc(p, n, &pl_families[F]);                                                      \
        return p;                                                                                 \
    }                                                                                             \
    static void *hook_memalign_##F(size_t al, size_t n)                                           \
    {                                                                                             \
        void *p = ((void *(*)(size_t, size_t))ORIG(F, PL_F_MEMALIGN))(al, n);                     \
        on_alloc(p, n, &pl_families[F]);                                                      \
        return p;                                                                                 \
    }                                                                                             \
    static void *hook_valloc_##F(size_t n)                                                        \
    {                                                                                             \
        void *p = ((void *(*)(size_t))ORIG(F, PL_F_VALLOC))(n);                                   \
        on_alloc(p, n, &pl_families[F]);                                                      \
        return p;                                                                                 \
    }                                                                                             \
    static void *hook_pvalloc_##F(size_t n)                                                       \
    {                                                                                             \
        void *p = ((void *(*)(size_t))ORIG(F, PL_F_PVALLOC))(n);                                  \
        on_alloc(p, n, &pl_families[F]);                                                      \
        return p;                                                                                 \
    }

PL_FAMILY_HOOKS(0)
PL_FAMILY_HOOKS(1)
PL_FAMILY_HOOKS(2)
PL_FAMILY_HOOKS(3)

#define PL_HOOK_ROW(F)                                                                            \
    {                                                                                             \
        [PL_F_MALLOC] = (uintptr_t)hook_malloc_##F, [PL_F_FREE] = (uintptr_t)hook_free_##F,       \
        [PL_F_CALLOC] = (uintptr_t)hook_calloc_##F, [PL_F_REALLOC] = (uintptr_t)hook_realloc_##F, \
        [PL_F_REALLOCARRAY] = (uintptr_t)hook_reallocarray_##F,                                   \
        [PL_F_POSIX_MEMALIGN] = (uintptr_t)hook_posix_memalign_##F,                               \
        [PL_F_ALIGNED_ALLOC] = (uintptr_t)hook_aligned_alloc_##F,                                 \
        [PL_F_MEMALIGN] = (uintptr_t)hook_memalign_##F, [PL_F_VALLOC] = (uintptr_t)hook_valloc_##F, \
        [PL_F_PVALLOC] = (uintptr_t)hook_pvalloc_##F,                                             \
    }

_Static_assert(PL_MAX_FAMILIES == 4, "one PL_FAMILY_HOOKS per family");

static const uintptr_t pl_hooks[PL_MAX_FAMILIES][PL_F_MALLOC_COUNT] = {
    PL_HOOK_ROW(0), PL_HOOK_ROW(1), PL_HOOK_ROW(2), PL_HOOK_ROW(3),
};

uintptr_t pl_hook_addr(int family, unsigned func)
{
    if (pl_func_is_map(func))
        return pl_hook_map_addr(family, func);
    if (func == PL_F_DLSYM || func == PL_F_DLVSYM)
        return pl_hook_dlsym_addr(family, func);
    if (pl_hooks_floor) /* bench only: forward, account nothing */
        return pl_hook_floor_addr(family, func);
    return func < PL_F_MALLOC_COUNT ? pl_hooks[family][func] : 0;
}
