/* hooks_mmap.c - mmap, mmap64, munmap and mremap hooks: anonymous memory
 * the program maps itself, sampled by bytes like malloc (issue 14).
 *
 * What counts: a successful mapping with MAP_ANONYMOUS and a protection
 * other than PROT_NONE, private or shared, its length rounded up to pages.
 * File mappings are files (page cache, reported under files by the RSS
 * breakdown), not memory the program allocated; PROT_NONE mappings are
 * address space reserved, not memory (a JVM or V8 reserves gigabytes this
 * way, and commits with mprotect, which is not hooked). Anonymous memory
 * mapped with a file of /dev/zero counts as a file.
 *
 * The same per-thread Poisson countdown as malloc's decides which mapping
 * is sampled (every byte, allocated or mapped, is a sampling point with
 * probability 1/rate), so weights mean the same in both kinds. A sampled
 * mapping goes into maptrack.h by its range; munmap, a MAP_FIXED mapping
 * over it and mremap take out exactly the part they remove, before the
 * call (so a range another thread maps at once is never taken out).
 * mremap follows realloc's model: the old range leaves, the new size is a
 * new mapping for the sampler. A range that was not sampled is anonymous
 * or not: that is only asked (from /proc/self/maps) when the sampler picks
 * the new range.
 *
 * Never hooked in a module that defines malloc itself (glibc's libc,
 * jemalloc, tcmalloc, mimalloc): those maps are the allocator's own and are
 * counted as malloc'ed blocks already (modules.c). glibc's malloc maps its
 * large chunks and arenas with the internal __mmap, which no GOT slot
 * reaches. The payload's own mappings (arena.c) never go through a slot.
 *
 * Same rules as hooks.c: the original is called first for mmap, the
 * reentrancy guard is held around every table operation (a signal handler
 * calling munmap on a thread that holds the table lock only forwards),
 * errno is preserved, nothing allocates.
 */
#include "payload/interpose/hooks_mmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/record/record.h"
#include "payload/interpose/family.h"
#include "payload/sys/sys.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif

/* Atomics, reset by pl_hooks_mmap_reset. */
static uint64_t pl_map_calls, pl_map_bytes, pl_unmap_calls, pl_remap_calls, pl_map_dropped;

static uintptr_t page_mask(void)
{
    static uintptr_t mask; /* racy but idempotent */
    if (UNLIKELY(!mask)) {
        long pg = sysconf(_SC_PAGESIZE);
        mask = (uintptr_t)(pg > 0 ? pg : 4096) - 1;
    }
    return mask;
}

static inline uint64_t page_round(size_t len)
{
    uintptr_t m = page_mask();
    return ((uint64_t)len + m) & ~(uint64_t)m;
}

static void count_dropped(void)
{
    __atomic_fetch_add(&pl_dropped, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_map_dropped, 1, __ATOMIC_RELAXED);
}

/* [p, p+n) is gone from the program's anonymous memory. */
static __attribute__((noinline)) void map_cut(struct pl_tls *t, uintptr_t p, uint64_t n)
{
    if (!pl_maptrack_count())
        return;
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    if (pl_busy_enter()) {
        pl_maptrack_cut(p, p + n);
        pl_busy_leave();
    }
    pl_guard_leave(t, k);
    errno = saved_errno;
}

/* The sampler picked [p, p+n): weights, next countdown, stack, bucket of
 * kind mmap, range table. check_anon: an mremap'd range we did not know;
 * it is only sampled if it is anonymous memory. */
static __attribute__((noinline, cold)) void map_sample(struct pl_tls *t, uintptr_t p, uint64_t n, int check_anon)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    t->smp.countdown = pl_sample_next_interval(&t->smp);
    if (!pl_busy_enter()) /* off meanwhile (a filter on its way) */
        goto off;
    if (check_anon && !pl_maps_anon(p))
        goto out;
    if (check_anon) {
        __atomic_fetch_add(&pl_map_calls, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&pl_map_bytes, n, __ATOMIC_RELAXED);
    }
    uint64_t est_bytes, est_objs;
    pl_sample_weight(n, t->smp.rate, &est_bytes, &est_objs);
    uintptr_t pcs[HI_MAX_FRAMES];
    uint32_t nf = pl_stack_capture(pcs, HI_MAX_FRAMES);
    int32_t b = pl_bucket_intern_kind(pl_stack_hash(pcs, nf), pcs, nf, t->self ? t->self->tid : 0, HI_KIND_MMAP);
    if (b < 0) {
        count_dropped();
        __atomic_fetch_add(&pl_walks_unkept, 1, __ATOMIC_RELAXED);
        goto out;
    }
    struct pl_mapent e = { p, p + n, est_bytes, est_objs, pl_sample_time_ns(), b, 1 };
    int r = pl_maptrack_insert(&e);
    pl_bucket_add(b, n, est_bytes, est_objs, r == 0);
    if (r)
        count_dropped();
out:
    pl_busy_leave();
off:
    pl_guard_leave(t, k);
    errno = saved_errno;
}

/* A new anonymous mapping [p, p+n), n page-rounded. */
static inline void on_map(struct pl_tls *t, int mode, uintptr_t p, uint64_t n)
{
    __atomic_fetch_add(&pl_map_calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_map_bytes, n, __ATOMIC_RELAXED);
    if (mode == PL_ENTER_FAST && pl_sample_step(&t->smp, n))
        map_sample(t, p, n, 0);
}

typedef void *(*pl_mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*pl_munmap_fn)(void *, size_t);
typedef void *(*pl_mremap_fn)(void *, size_t, size_t, int, ...);

static inline __attribute__((always_inline)) void *do_mmap(void *fn, void *a, size_t len, int prot, int flags,
                                                           int fd, off_t off)
{
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode == PL_ENTER_FORWARD)
        return ((pl_mmap_fn)fn)(a, len, prot, flags, fd, off);
    /* MAP_FIXED replaces whatever was there: out of the table first (if
     * the call fails, the old range may be gone or not: it stays out, an
     * underestimate). */
    if (UNLIKELY(flags & MAP_FIXED) && !((uintptr_t)a & page_mask()) && len)
        map_cut(t, (uintptr_t)a, page_round(len));
    void *p = ((pl_mmap_fn)fn)(a, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) && prot != PROT_NONE && len)
        on_map(t, mode, (uintptr_t)p, page_round(len));
    return p;
}

static inline __attribute__((always_inline)) int do_munmap(void *fn, void *a, size_t len)
{
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode != PL_ENTER_FORWARD) {
        __atomic_fetch_add(&pl_unmap_calls, 1, __ATOMIC_RELAXED);
        /* Before the call; an unaligned address fails with EINVAL and
         * unmaps nothing. If a valid call fails anyway (ENOMEM: too many
         * mappings to split), the range stays out: an underestimate. */
        if (!((uintptr_t)a & page_mask()) && len)
            map_cut(t, (uintptr_t)a, page_round(len));
    }
    return ((pl_munmap_fn)fn)(a, len);
}

#define PL_REMAP_PARTS 8 /* parts an mremap's old range can be put back from */

/* The sampled parts of [p, p+n) leave before an mremap; copies of them
 * go to out (max PL_REMAP_PARTS) for a put back if the call fails. */
static __attribute__((noinline)) unsigned remap_take(struct pl_tls *t, uintptr_t p, uint64_t n,
                                                     struct pl_mapent *out)
{
    if (!pl_maptrack_count())
        return 0;
    uint64_t k = pl_guard_enter(t);
    unsigned r = pl_maptrack_take(p, p + n, out, PL_REMAP_PARTS);
    pl_guard_leave(t, k);
    return r;
}

static __attribute__((noinline)) void remap_put_back(struct pl_tls *t, const struct pl_mapent *parts, unsigned n)
{
    int saved_errno = errno;
    uint64_t k = pl_guard_enter(t);
    pl_maptrack_put_back(parts, n);
    pl_guard_leave(t, k);
    errno = saved_errno;
}

static inline __attribute__((always_inline)) void *do_mremap(void *fn, void *old, size_t os, size_t ns, int flags,
                                                             void *na)
{
    struct pl_tls *t = &pl_tls;
    int mode = pl_thread_enter(t);
    if (mode == PL_ENTER_FORWARD || ((uintptr_t)old & page_mask()))
        return ((pl_mremap_fn)fn)(old, os, ns, flags, na);
    uint64_t on = page_round(os), nn = page_round(ns);
    /* The old range leaves before the call (moved, or shrunk/grown in
     * place: the new size is sampled afresh, realloc's model), so a range
     * another thread maps at the old address once it is free is never
     * taken out; a failed call (ENOMEM without MREMAP_MAYMOVE, common for
     * a grow-in-place attempt) puts it back. os == 0 duplicates a shared
     * mapping and removes nothing. A part we sampled is known to be
     * anonymous. */
    struct pl_mapent parts[PL_REMAP_PARTS];
    unsigned nparts = on ? remap_take(t, (uintptr_t)old, on, parts) : 0;
    void *p = ((pl_mremap_fn)fn)(old, os, ns, flags, na);
    if (p == MAP_FAILED) {
        if (nparts)
            remap_put_back(t, parts, nparts);
        return p;
    }
    __atomic_fetch_add(&pl_remap_calls, 1, __ATOMIC_RELAXED);
    if (!nn)
        return p;
    if (nparts) {
        on_map(t, mode, (uintptr_t)p, nn);
    } else if (mode == PL_ENTER_FAST && pl_sample_step(&t->smp, nn)) {
        map_sample(t, (uintptr_t)p, nn, 1);
    }
    return p;
}

#define ORIG(F, FN) (__atomic_load_n(&pl_families[F].orig[FN], __ATOMIC_RELAXED))

#define PL_MAP_HOOKS(F)                                                                           \
    static void *hook_mmap_##F(void *a, size_t len, int prot, int flags, int fd, off_t off)       \
    {                                                                                             \
        return do_mmap(ORIG(F, PL_F_MMAP), a, len, prot, flags, fd, off);                         \
    }                                                                                             \
    static void *hook_mmap64_##F(void *a, size_t len, int prot, int flags, int fd, off_t off)     \
    {                                                                                             \
        return do_mmap(ORIG(F, PL_F_MMAP64), a, len, prot, flags, fd, off);                       \
    }                                                                                             \
    static int hook_munmap_##F(void *a, size_t len)                                               \
    {                                                                                             \
        return do_munmap(ORIG(F, PL_F_MUNMAP), a, len);                                           \
    }                                                                                             \
    static void *hook_mremap_##F(void *old, size_t os, size_t ns, int flags, ...)                 \
    {                                                                                             \
        void *na = NULL;                                                                          \
        if (flags & MREMAP_FIXED) {                                                               \
            va_list ap;                                                                           \
            va_start(ap, flags);                                                                  \
            na = va_arg(ap, void *);                                                              \
            va_end(ap);                                                                           \
        }                                                                                         \
        return do_mremap(ORIG(F, PL_F_MREMAP), old, os, ns, flags, na);                           \
    }

PL_MAP_HOOKS(0)
PL_MAP_HOOKS(1)
PL_MAP_HOOKS(2)
PL_MAP_HOOKS(3)

_Static_assert(PL_MAX_FAMILIES == 4, "one PL_MAP_HOOKS per family");

#define PL_MAP_ROW(F)                                                                             \
    {                                                                                             \
        (uintptr_t)hook_mmap_##F, (uintptr_t)hook_mmap64_##F, (uintptr_t)hook_munmap_##F,          \
            (uintptr_t)hook_mremap_##F,                                                           \
    }

static const uintptr_t pl_map_hooks[PL_MAX_FAMILIES][4] = {
    PL_MAP_ROW(0), PL_MAP_ROW(1), PL_MAP_ROW(2), PL_MAP_ROW(3),
};

uintptr_t pl_hook_map_addr(int family, unsigned func)
{
    return pl_func_is_map(func) ? pl_map_hooks[family][func - PL_F_MMAP] : 0;
}

void pl_hooks_mmap_counts(struct hi_snap_mmap *out)
{
    out->map_calls = __atomic_load_n(&pl_map_calls, __ATOMIC_RELAXED);
    out->map_bytes = __atomic_load_n(&pl_map_bytes, __ATOMIC_RELAXED);
    out->unmap_calls = __atomic_load_n(&pl_unmap_calls, __ATOMIC_RELAXED);
    out->remap_calls = __atomic_load_n(&pl_remap_calls, __ATOMIC_RELAXED);
    out->tracked = pl_maptrack_count();
    out->dropped = __atomic_load_n(&pl_map_dropped, __ATOMIC_RELAXED);
}

void pl_hooks_mmap_reset(void)
{
    __atomic_store_n(&pl_map_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_map_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_unmap_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_remap_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_map_dropped, 0, __ATOMIC_RELAXED);
}
