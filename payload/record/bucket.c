/* bucket.c - stack table: lock-free lookup, locked insert, sharded atomic counters. */
#include "payload/record/bucket.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "payload/sys/sys.h"
#include "payload/record/sample.h"

#define PL_BUCKET_INDEX (PL_MAX_BUCKETS * 2u) /* power of two, load <= 0.5 */

static struct pl_bucket *pl_buckets;  /* PL_MAX_BUCKETS */
static uint32_t *pl_bucket_index;     /* bucket idx + 1, 0 = empty; published with release */
static uintptr_t *pl_bucket_pool;     /* frames of all buckets */
static uint32_t pl_bucket_n;          /* published buckets (release) */
static uint32_t pl_bucket_pool_used;  /* pl_bucket_lock */
static pl_lock_t pl_bucket_lock;      /* inserts */

/* One cache line of counters per bucket and shard. The estimates are kept
 * as what they add to the raw counts (est - raw): at RATE=1 that is 0 and
 * its atomic add is skipped, half of the locked instructions a sample and
 * a free of it cost (perf: the locked adds were an eighth of RATE=1).
 * Live is not a counter: it is what was allocated minus what went (freed,
 * unmapped), so a sample adds to the alloc side only (4 locked adds at the
 * default rate, 2 at RATE=1, where alloc and live took 8 and 4) and its
 * free to the gone side. */
struct pl_bucket_counts {
    uint64_t raw_alloc_bytes, raw_alloc_objs, xtra_alloc_bytes, xtra_alloc_objs_fp;
    uint64_t raw_gone_bytes, raw_gone_objs, xtra_gone_bytes, xtra_gone_objs_fp;
} __attribute__((aligned(64)));

static struct pl_bucket_counts *pl_bucket_shard[PL_BUCKET_SHARDS]; /* PL_MAX_BUCKETS each */
static unsigned pl_bucket_nshards = 1; /* power of two <= PL_BUCKET_SHARDS, set by init */

/* The shard of the CPU we run on, asked again every PL_SHARD_RECHECK
 * samples of the thread: sched_getcpu reads the rseq area (5
 * instructions), or where glibc has no rseq (valgrind) calls the vDSO (30;
 * twice a sampled pair at RATE=1). A thread that moved on since only
 * shares a line for a while; the counts are right whatever shard. */
#define PL_SHARD_RECHECK 64u
static __thread struct {
    uint32_t left, shard;
} pl_shard_now;

static inline struct pl_bucket_counts *shard_of(int32_t idx)
{
    if (pl_bucket_nshards == 1)
        return &pl_bucket_shard[0][idx];
    if (__builtin_expect(pl_shard_now.left == 0, 0)) {
        int cpu = sched_getcpu();
        pl_shard_now.shard = cpu > 0 ? (unsigned)cpu & (pl_bucket_nshards - 1) : 0;
        pl_shard_now.left = PL_SHARD_RECHECK;
    }
    pl_shard_now.left--;
    return &pl_bucket_shard[pl_shard_now.shard][idx];
}

int pl_bucket_init(void)
{
    if (pl_buckets)
        return 0;
    pl_buckets = pl_arena_map_child_empty(sizeof(struct pl_bucket) * PL_MAX_BUCKETS);
    pl_bucket_index = pl_arena_map_child_empty(sizeof(uint32_t) * PL_BUCKET_INDEX);
    pl_bucket_pool = pl_arena_map_child_empty(sizeof(uintptr_t) * PL_MAX_BUCKET_FRAMES);
    if (!pl_buckets || !pl_bucket_index || !pl_bucket_pool)
        return -ENOMEM;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    unsigned n = 1;
    while (n < PL_BUCKET_SHARDS && (long)n < ncpu)
        n *= 2;
    for (unsigned i = 0; i < n; i++)
        if (!(pl_bucket_shard[i] = pl_arena_map_child_empty(sizeof(struct pl_bucket_counts) * PL_MAX_BUCKETS)))
            return -ENOMEM;
    pl_bucket_nshards = n;
    return 0;
}

static void reset_tick_risers(void);

void pl_bucket_reset(void)
{
    pl_lock(&pl_bucket_lock);
    uint32_t n = __atomic_load_n(&pl_bucket_n, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_bucket_n, 0, __ATOMIC_RELEASE);
    pl_arena_clear(pl_bucket_index, sizeof(uint32_t) * PL_BUCKET_INDEX);
    if (n) {
        pl_arena_clear(pl_buckets, sizeof(struct pl_bucket) * n);
        for (unsigned i = 0; i < pl_bucket_nshards; i++)
            pl_arena_clear(pl_bucket_shard[i], sizeof(struct pl_bucket_counts) * n);
    }
    if (pl_bucket_pool_used)
        pl_arena_clear(pl_bucket_pool, sizeof(uintptr_t) * pl_bucket_pool_used);
    pl_bucket_pool_used = 0;
    reset_tick_risers(); /* their bucket indices are no more */
    pl_unlock(&pl_bucket_lock);
}

static int same_stack(const struct pl_bucket *b, uint64_t hash, const uintptr_t *pcs, uint32_t n, uint32_t kind)
{
    if (b->hash != hash || b->nframes != n || b->kind != kind)
        return 0;
    /* a plain loop: ~40 frames, no call into libc's memcmp */
    const uintptr_t *f = &pl_bucket_pool[b->frames_off];
    for (uint32_t i = 0; i < n; i++)
        if (f[i] != pcs[i])
            return 0;
    return 1;
}


/* The insert, under the lock (a new stack: once per bucket), out of line
 * so that the lookup of a known stack saves no registers for it. */
static __attribute__((noinline)) int32_t insert(uint64_t hash, uint32_t pos, const uintptr_t *pcs, uint32_t n,
                                                int32_t tid, uint32_t kind)
{
    uint32_t mask = PL_BUCKET_INDEX - 1;
    int32_t found = -1;
    pl_lock(&pl_bucket_lock);
    for (uint32_t i = 0; i < PL_BUCKET_INDEX; i++) {
        uint32_t *slot = &pl_bucket_index[(pos + i) & mask];
        uint32_t v = *slot;
        if (v) {
            if (same_stack(&pl_buckets[v - 1], hash, pcs, n, kind)) {
                found = (int32_t)(v - 1);
                break;
            }
            continue;
        }
        uint32_t idx = pl_bucket_n;
        if (idx >= PL_MAX_BUCKETS || pl_bucket_pool_used + n > PL_MAX_BUCKET_FRAMES)
            break; /* full: the caller counts a dropped sample */
        /* What the new stack costs in memory: its bucket, its frames, its
         * counters in every shard and, at worst, a page of the index. */
        if (pl_arena_claim(sizeof(struct pl_bucket) + n * sizeof(uintptr_t) +
                           pl_bucket_nshards * sizeof(struct pl_bucket_counts) + sizeof(uint32_t)) < 0) {
            pl_arena_budget_drop(); /* at the budget: the caller counts it dropped too */
            break;
        }
        struct pl_bucket *b = &pl_buckets[idx];
        memset(b, 0, sizeof(*b));
        b->hash = hash;
        b->nframes = n;
        b->frames_off = pl_bucket_pool_used;
        b->first_tid = tid;
        b->kind = kind;
        for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
            b->growth[g] = -1;
        memcpy(&pl_bucket_pool[pl_bucket_pool_used], pcs, n * sizeof(uintptr_t));
        pl_bucket_pool_used += n;
        __atomic_store_n(&pl_bucket_n, idx + 1, __ATOMIC_RELEASE);
        __atomic_store_n(slot, idx + 1, __ATOMIC_RELEASE);
        found = (int32_t)idx;
        break;
    }
    pl_unlock(&pl_bucket_lock);
    return found;
}

/* Inlined into both entry points: for malloc's kind (0) the kind's part
 * of the hash folds away, and the sampled path makes one call, not two. */
static inline __attribute__((always_inline)) int32_t intern(uint64_t hash, const uintptr_t *pcs, uint32_t n,
                                                            int32_t tid, uint32_t kind)
{
    hash ^= (uint64_t)kind * 0x9E3779B97F4A7C15ull; /* kind 0: the stack's own hash */
    hash += !hash;
    uint32_t mask = PL_BUCKET_INDEX - 1;
    uint32_t pos = (uint32_t)(hash ^ (hash >> 32)) & mask;

    /* Lock-free probe: a published slot never changes during a session. */
    for (uint32_t i = 0; i < PL_BUCKET_INDEX; i++) {
        uint32_t v = __atomic_load_n(&pl_bucket_index[(pos + i) & mask], __ATOMIC_ACQUIRE);
        if (v == 0)
            break;
        if (same_stack(&pl_buckets[v - 1], hash, pcs, n, kind))
            return (int32_t)(v - 1);
    }
    return insert(hash, pos, pcs, n, tid, kind);
}

/* est_bytes >= size and est_objs_fp >= PL_OBJ_FP_ONE (weights are 1/p,
 * p <= 1), so the extras are never negative. */
void pl_bucket_add(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp, int live)
{
    struct pl_bucket_counts *c = shard_of(idx);
    uint64_t xb = est_bytes - size, xo = est_objs_fp - PL_OBJ_FP_ONE;
    __atomic_fetch_add(&c->raw_alloc_bytes, size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->raw_alloc_objs, 1, __ATOMIC_RELAXED);
    if (xb)
        __atomic_fetch_add(&c->xtra_alloc_bytes, xb, __ATOMIC_RELAXED);
    if (xo)
        __atomic_fetch_add(&c->xtra_alloc_objs_fp, xo, __ATOMIC_RELAXED);
    if (!live) /* not in the address map: gone at once (rare) */
        pl_bucket_sub_live(idx, size, est_bytes, est_objs_fp);
}

void pl_bucket_sub_live(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp)
{
    pl_bucket_sub_live_part(idx, size, est_bytes, 1, est_objs_fp);
}

void pl_bucket_sub_live_part(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t objs, uint64_t est_objs_fp)
{
    if (idx < 0 || (uint32_t)idx >= __atomic_load_n(&pl_bucket_n, __ATOMIC_ACQUIRE))
        return; /* entry from a previous session */
    struct pl_bucket_counts *c = shard_of(idx);
    uint64_t xb = est_bytes - size, xo = est_objs_fp - objs * PL_OBJ_FP_ONE;
    __atomic_fetch_add(&c->raw_gone_bytes, size, __ATOMIC_RELAXED);
    if (objs)
        __atomic_fetch_add(&c->raw_gone_objs, objs, __ATOMIC_RELAXED);
    if (xb)
        __atomic_fetch_add(&c->xtra_gone_bytes, xb, __ATOMIC_RELAXED);
    if (xo)
        __atomic_fetch_add(&c->xtra_gone_objs_fp, xo, __ATOMIC_RELAXED);
}

void pl_bucket_add_live_part(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t objs, uint64_t est_objs_fp)
{
    /* The gone side's adds undone: the same adds of the negated amounts
     * (unsigned wrap-around, as the shards already do). */
    pl_bucket_sub_live_part(idx, -size, -est_bytes, -objs, -est_objs_fp);
}

/* Sums the shards of bucket idx into its counter fields. Every shard's
 * gone side is read before any alloc side: a free is counted after its
 * sample's alloc (on whatever shard), so live (alloc - gone) is never
 * seen below zero while samples come and go. Shards alone may wrap (a
 * block freed on another CPU than it was allocated on); the sums do not. */
static void fold(uint32_t idx)
{
    struct pl_bucket_counts sum = { 0 };
    for (unsigned s = 0; s < pl_bucket_nshards; s++) {
        const struct pl_bucket_counts *c = &pl_bucket_shard[s][idx];
        sum.raw_gone_bytes += __atomic_load_n(&c->raw_gone_bytes, __ATOMIC_ACQUIRE);
        sum.raw_gone_objs += __atomic_load_n(&c->raw_gone_objs, __ATOMIC_ACQUIRE);
        sum.xtra_gone_bytes += __atomic_load_n(&c->xtra_gone_bytes, __ATOMIC_ACQUIRE);
        sum.xtra_gone_objs_fp += __atomic_load_n(&c->xtra_gone_objs_fp, __ATOMIC_ACQUIRE);
    }
    for (unsigned s = 0; s < pl_bucket_nshards; s++) {
        const struct pl_bucket_counts *c = &pl_bucket_shard[s][idx];
        sum.raw_alloc_bytes += __atomic_load_n(&c->raw_alloc_bytes, __ATOMIC_ACQUIRE);
        sum.raw_alloc_objs += __atomic_load_n(&c->raw_alloc_objs, __ATOMIC_ACQUIRE);
        sum.xtra_alloc_bytes += __atomic_load_n(&c->xtra_alloc_bytes, __ATOMIC_ACQUIRE);
        sum.xtra_alloc_objs_fp += __atomic_load_n(&c->xtra_alloc_objs_fp, __ATOMIC_ACQUIRE);
    }
    uint64_t raw_live_bytes = sum.raw_alloc_bytes - sum.raw_gone_bytes;
    uint64_t raw_live_objs = sum.raw_alloc_objs - sum.raw_gone_objs;
    uint64_t xtra_live_bytes = sum.xtra_alloc_bytes - sum.xtra_gone_bytes;
    uint64_t xtra_live_objs_fp = sum.xtra_alloc_objs_fp - sum.xtra_gone_objs_fp;
    struct pl_bucket *b = &pl_buckets[idx];
    __atomic_store_n(&b->raw_live_bytes, raw_live_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&b->raw_live_objs, raw_live_objs, __ATOMIC_RELAXED);
    __atomic_store_n(&b->raw_alloc_bytes, sum.raw_alloc_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&b->raw_alloc_objs, sum.raw_alloc_objs, __ATOMIC_RELAXED);
    __atomic_store_n(&b->est_live_bytes, raw_live_bytes + xtra_live_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&b->est_live_objs_fp, raw_live_objs * PL_OBJ_FP_ONE + xtra_live_objs_fp, __ATOMIC_RELAXED);
    __atomic_store_n(&b->est_alloc_bytes, sum.raw_alloc_bytes + sum.xtra_alloc_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&b->est_alloc_objs_fp, sum.raw_alloc_objs * PL_OBJ_FP_ONE + sum.xtra_alloc_objs_fp,
                     __ATOMIC_RELAXED);
}

uint32_t pl_bucket_count(void)
{
    return __atomic_load_n(&pl_bucket_n, __ATOMIC_ACQUIRE);
}

struct pl_bucket *pl_bucket_at(uint32_t idx)
{
    fold(idx);
    return &pl_buckets[idx];
}

const uintptr_t *pl_bucket_frames(const struct pl_bucket *b)
{
    return &pl_bucket_pool[b->frames_off];
}

/* The tick's top risers, found in pl_bucket_tick's pass (agent thread
 * only: no lock, no allocation). */
static struct hi_tick_top tick_top;

/* Keeps the HI_TICK_TOP greatest rises, most first (a short insertion list). */
static void note_rise(uint32_t bucket, int64_t grew, int64_t live)
{
    unsigned at = tick_top.ntop;
    while (at > 0 && tick_top.top[at - 1].grew < grew)
        at--;
    if (at >= HI_TICK_TOP)
        return;
    if (tick_top.ntop < HI_TICK_TOP)
        tick_top.ntop++;
    memmove(&tick_top.top[at + 1], &tick_top.top[at], (tick_top.ntop - 1 - at) * sizeof(tick_top.top[0]));
    tick_top.top[at] = (struct hi_tick_top_entry){ bucket, 0, grew, (uint64_t)live };
}

/* The buckets that were among the top risers, the ones most recently
 * among them kept (agent thread only), and the tick each was last there. */
static struct hi_tick_kept tick_kept;
static uint64_t kept_at[HI_TICK_KEPT], tick_no;

static void reset_tick_risers(void)
{
    tick_top.ntop = 0;
    tick_kept.nkept = 0;
    tick_no = 0;
}

/* This tick's risers join the kept set, each replacing the one longest
 * out of the top when it is full; every kept bucket's live bytes are
 * read as of now (folded in this tick's pass). */
static void keep_risers(void)
{
    tick_no++;
    for (unsigned k = 0; k < tick_top.ntop; k++) {
        uint32_t bucket = tick_top.top[k].bucket;
        unsigned at = 0;
        while (at < tick_kept.nkept && tick_kept.kept[at].bucket != bucket)
            at++;
        if (at == tick_kept.nkept && tick_kept.nkept < HI_TICK_KEPT) {
            tick_kept.nkept++;
        } else if (at == tick_kept.nkept) {
            at = 0; /* full: the one longest out of the top (never this tick's: 4 < 8) */
            for (unsigned j = 1; j < HI_TICK_KEPT; j++)
                if (kept_at[j] < kept_at[at])
                    at = j;
        }
        tick_kept.kept[at].bucket = bucket;
        kept_at[at] = tick_no;
    }
    for (unsigned j = 0; j < tick_kept.nkept; j++) {
        int64_t live = pl_buckets[tick_kept.kept[j].bucket].growth[HI_GROWTH_POINTS - 1];
        tick_kept.kept[j].live = live > 0 ? (uint64_t)live : 0;
    }
}

void pl_bucket_tick(void)
{
    uint32_t n = pl_bucket_count();
    tick_top.ntop = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct pl_bucket *b = &pl_buckets[i];
        fold(i);
        for (unsigned g = 0; g + 1 < HI_GROWTH_POINTS; g++)
            b->growth[g] = b->growth[g + 1];
        int64_t now = (int64_t)__atomic_load_n(&b->est_live_bytes, __ATOMIC_RELAXED);
        b->growth[HI_GROWTH_POINTS - 1] = now;
        /* a bucket born since the last tick rose from nothing */
        int64_t before = b->growth[HI_GROWTH_POINTS - 2] < 0 ? 0 : b->growth[HI_GROWTH_POINTS - 2];
        if (now > before)
            note_rise(i, now - before, now);
    }
    keep_risers();
}

void pl_bucket_tick_kept(struct hi_tick_kept *out)
{
    *out = tick_kept;
}

void pl_bucket_tick_top(struct hi_tick_top *out)
{
    *out = tick_top;
}

PL_FORK_TEXT void pl_bucket_atfork_child(void)
{
    if (__atomic_load_n(&pl_bucket_lock.held, __ATOMIC_RELAXED)) /* else no write: no page copied */
        pl_bucket_lock.held = 0;
}

int32_t pl_bucket_intern(uint64_t hash, const uintptr_t *pcs, uint32_t n, int32_t tid)
{
    return intern(hash, pcs, n, tid, HI_KIND_MALLOC);
}

int32_t pl_bucket_intern_kind(uint64_t hash, const uintptr_t *pcs, uint32_t n, int32_t tid, uint32_t kind)
{
    return intern(hash, pcs, n, tid, kind);
}
