/* maptrack.c - sorted array of the live sampled mappings. */
#include "payload/record/maptrack.h"

#include <errno.h>
#include <string.h>

#include "payload/sys/sys.h"
#include "payload/record/bucket.h"

static struct pl_mapent *pl_maps; /* PL_MAX_MAPS, sorted by lo, disjoint; pl_maps_lock */
static uint32_t pl_nmaps;         /* written under pl_maps_lock, read racily for the fast check */
static pl_lock_t pl_maps_lock;

int pl_maptrack_init(void)
{
    if (pl_maps)
        return 0;
    pl_maps = pl_arena_map_child_empty(sizeof(*pl_maps) * PL_MAX_MAPS);
    return pl_maps ? 0 : -ENOMEM;
}

void pl_maptrack_reset(void)
{
    pl_lock(&pl_maps_lock);
    uint32_t n = pl_nmaps;
    __atomic_store_n(&pl_nmaps, 0, __ATOMIC_RELAXED);
    if (n)
        pl_arena_clear(pl_maps, sizeof(*pl_maps) * n);
    pl_unlock(&pl_maps_lock);
}

/* First index whose lo >= x. */
static uint32_t lower_bound(uintptr_t x)
{
    uint32_t a = 0, b = pl_nmaps;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (pl_maps[m].lo < x)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* est * part / whole without overflow; whole > 0, part <= whole. */
static uint64_t share(uint64_t est, uint64_t part, uint64_t whole)
{
    return (uint64_t)((unsigned __int128)est * part / whole);
}

static void set_count(uint32_t n)
{
    __atomic_store_n(&pl_nmaps, n, __ATOMIC_RELAXED);
}

/* Where the parts taken out go (pl_maptrack_take), or nowhere. */
struct taken {
    struct pl_mapent *out;
    unsigned max, n;
};

/* Part [lo, hi) of e, standing for est bytes and objs objects, leaves: its
 * bucket loses it, and it is kept in *t when there is room. */
static void take_part(struct taken *t, const struct pl_mapent *e, uintptr_t lo, uintptr_t hi, uint64_t est,
                      uint32_t objs, uint64_t objs_fp)
{
    pl_bucket_sub_live_part(e->bucket, hi - lo, est, objs, objs_fp);
    if (t && t->n < t->max)
        t->out[t->n++] = (struct pl_mapent){ lo, hi, est, objs_fp, e->time_ns, e->bucket, objs };
}

/* A hole [lo, hi) strictly inside piece i: head stays at i (with the
 * object), the tail becomes a piece of its own after it. */
static void cut_hole(uint32_t i, uintptr_t lo, uintptr_t hi, struct taken *tk)
{
    struct pl_mapent *e = &pl_maps[i];
    uint64_t size = e->hi - e->lo;
    uint64_t mid = share(e->est_bytes, hi - lo, size);
    uint64_t tail = share(e->est_bytes, e->hi - hi, size);
    take_part(tk, e, lo, hi, mid, 0, 0);
    struct pl_mapent t = { hi, e->hi, tail, 0, e->time_ns, e->bucket, 0 };
    e->est_bytes -= mid + tail; /* >= lo - e->lo: each share was rounded down */
    e->hi = lo;
    if (pl_nmaps >= PL_MAX_MAPS) {
        /* no room for the tail: it is counted as gone (an underestimate) */
        pl_bucket_sub_live_part(t.bucket, t.hi - t.lo, t.est_bytes, 0, 0);
        return;
    }
    memmove(&pl_maps[i + 2], &pl_maps[i + 1], (pl_nmaps - i - 1) * sizeof(*pl_maps));
    pl_maps[i + 1] = t;
    set_count(pl_nmaps + 1);
}

/* pl_maptrack_cut with the lock held; the parts taken out go to tk. */
static unsigned cut_locked(uintptr_t lo, uintptr_t hi, struct taken *tk)
{
    uint32_t n = pl_nmaps;
    uint32_t i = lower_bound(lo);
    if (i > 0 && pl_maps[i - 1].hi > lo)
        i--;
    if (i >= n || pl_maps[i].lo >= hi)
        return 0;
    if (pl_maps[i].lo < lo && pl_maps[i].hi > hi) {
        cut_hole(i, lo, hi, tk);
        return 1;
    }
    uint32_t j = i, w = i;
    for (; j < n && pl_maps[j].lo < hi; j++) {
        struct pl_mapent *e = &pl_maps[j];
        uintptr_t clo = e->lo > lo ? e->lo : lo, chi = e->hi < hi ? e->hi : hi;
        uint64_t size = e->hi - e->lo, u = chi - clo;
        if (u == size) {
            take_part(tk, e, e->lo, e->hi, e->est_bytes, e->objs, e->est_objs_fp);
            continue; /* gone: not copied down */
        }
        uint64_t part = share(e->est_bytes, u, size);
        take_part(tk, e, clo, chi, part, 0, 0);
        e->est_bytes -= part;
        if (clo == e->lo)
            e->lo = chi;
        else
            e->hi = clo;
        if (w != j)
            pl_maps[w] = *e;
        w++;
    }
    if (w != j) {
        memmove(&pl_maps[w], &pl_maps[j], (n - j) * sizeof(*pl_maps));
        set_count(n - (j - w));
    }
    return j - i;
}

unsigned pl_maptrack_cut(uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi || !__atomic_load_n(&pl_nmaps, __ATOMIC_RELAXED))
        return 0;
    pl_lock(&pl_maps_lock);
    unsigned r = cut_locked(lo, hi, NULL);
    pl_unlock(&pl_maps_lock);
    return r;
}

unsigned pl_maptrack_take(uintptr_t lo, uintptr_t hi, struct pl_mapent *out, unsigned max)
{
    if (lo >= hi || !__atomic_load_n(&pl_nmaps, __ATOMIC_RELAXED))
        return 0;
    struct taken tk = { out, max, 0 };
    pl_lock(&pl_maps_lock);
    cut_locked(lo, hi, &tk);
    pl_unlock(&pl_maps_lock);
    return tk.n;
}

void pl_maptrack_put_back(const struct pl_mapent *parts, unsigned n)
{
    pl_lock(&pl_maps_lock);
    for (unsigned i = 0; i < n; i++) {
        const struct pl_mapent *e = &parts[i];
        cut_locked(e->lo, e->hi, NULL); /* nothing, unless unmapped behind our back */
        if (pl_nmaps >= PL_MAX_MAPS)
            break; /* lost: an underestimate */
        uint32_t at = lower_bound(e->lo);
        memmove(&pl_maps[at + 1], &pl_maps[at], (pl_nmaps - at) * sizeof(*pl_maps));
        pl_maps[at] = *e;
        set_count(pl_nmaps + 1);
        pl_bucket_add_live_part(e->bucket, e->hi - e->lo, e->est_bytes, e->objs, e->est_objs_fp);
    }
    pl_unlock(&pl_maps_lock);
}

int pl_maptrack_insert(const struct pl_mapent *e)
{
    pl_lock(&pl_maps_lock);
    cut_locked(e->lo, e->hi, NULL); /* stale ranges: unmapped where we did not see it */
    int r = -ENOSPC;
    if (pl_nmaps < PL_MAX_MAPS) {
        uint32_t i = lower_bound(e->lo);
        memmove(&pl_maps[i + 1], &pl_maps[i], (pl_nmaps - i) * sizeof(*pl_maps));
        pl_maps[i] = *e;
        set_count(pl_nmaps + 1);
        r = 0;
    }
    pl_unlock(&pl_maps_lock);
    return r;
}

int pl_maptrack_overlaps(uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi || !__atomic_load_n(&pl_nmaps, __ATOMIC_RELAXED))
        return 0;
    pl_lock(&pl_maps_lock);
    uint32_t i = lower_bound(lo);
    int r = (i > 0 && pl_maps[i - 1].hi > lo) || (i < pl_nmaps && pl_maps[i].lo < hi);
    pl_unlock(&pl_maps_lock);
    return r;
}

void pl_maptrack_foreach(void (*fn)(const struct pl_mapent *e, void *arg), void *arg)
{
    pl_lock(&pl_maps_lock);
    for (uint32_t i = 0; i < pl_nmaps; i++)
        fn(&pl_maps[i], arg);
    pl_unlock(&pl_maps_lock);
}

uint64_t pl_maptrack_count(void)
{
    return __atomic_load_n(&pl_nmaps, __ATOMIC_RELAXED);
}

PL_FORK_TEXT void pl_maptrack_atfork_child(void)
{
    if (__atomic_load_n(&pl_maps_lock.held, __ATOMIC_RELAXED)) /* else no write: no page copied */
        pl_maps_lock.held = 0;
}
