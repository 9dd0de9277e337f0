/* bucket.h - the stack table: one bucket per distinct sampled call stack.
 *
 * Bounded (PL_MAX_BUCKETS buckets, PL_MAX_BUCKET_FRAMES frames in all, all
 * mapped MAP_NORESERVE and touched only as buckets are made); when full, a
 * new stack is dropped and counted, nothing fails. Lookups are lock-free
 * (open addressing, slots only ever go from empty to published); inserts
 * take one lock. Buckets are never removed during a session.
 *
 * Counters: the sampled paths add to one of up to PL_BUCKET_SHARDS copies
 * of a bucket's counters, chosen by the CPU they run on (atomics, one cache
 * line per bucket and shard). Threads of a service allocate through the
 * same hot stacks; with one copy, every sample on one core took that line
 * away from the other (perf: a tenth of the sampling cost on 2 cores).
 * The counter fields of struct pl_bucket are the agent's sum of the
 * shards, brought up to date by pl_bucket_at and pl_bucket_tick.
 */
#ifndef HI_PAYLOAD_BUCKET_H
#define HI_PAYLOAD_BUCKET_H

#include <stdint.h>

#include "common/proto.h"

#define PL_MAX_BUCKETS (1u << 18)
#define PL_MAX_BUCKET_FRAMES (8u << 20) /* 40 frames for each of 2^17 stacks and more */
#define PL_BUCKET_SHARDS 4u

struct pl_bucket {
    uint64_t hash;
    uint32_t frames_off, nframes; /* into the frame pool */
    int32_t first_tid;
    uint32_t kind;                /* enum hi_kind: part of the bucket's identity */
    /* Sums over the shards, written by the agent (pl_bucket_at, tick) */
    uint64_t raw_live_bytes, raw_live_objs, raw_alloc_bytes, raw_alloc_objs;
    uint64_t est_live_bytes, est_live_objs_fp, est_alloc_bytes, est_alloc_objs_fp;
    int64_t growth[HI_GROWTH_POINTS]; /* agent thread only; -1 = no point yet */
};

/* Maps the table (once). 0 or -ENOMEM. */
int pl_bucket_init(void);

/* Empties the table for a new session. */
void pl_bucket_reset(void);

/* Index of the bucket for this stack, created if new. -1 when full. */
int32_t pl_bucket_intern(uint64_t hash, const uintptr_t *pcs, uint32_t n, int32_t tid);

/* The same for a kind (enum hi_kind): one stack that both mallocs and maps
 * (a libffi call site calls whatever it is given) is two buckets. */
int32_t pl_bucket_intern_kind(uint64_t hash, const uintptr_t *pcs, uint32_t n, int32_t tid, uint32_t kind);

/* A sampled allocation: adds to the alloc totals, and to live when `live`
 * (it is in the address map). */
void pl_bucket_add(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp, int live);

/* A live sampled block was freed. */
void pl_bucket_sub_live(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp);

/* Part of a live sampled mapping went away (munmap of a part): `size`
 * bytes standing for est_bytes (>= size), and `objs` (0 or 1) objects
 * standing for est_objs_fp (>= objs * PL_OBJ_FP_ONE). */
void pl_bucket_sub_live_part(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t objs, uint64_t est_objs_fp);

/* Undoes pl_bucket_sub_live_part (a part put back after a failed mremap). */
void pl_bucket_add_live_part(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t objs, uint64_t est_objs_fp);

/* Number of published buckets (indices 0..n-1 are valid). */
uint32_t pl_bucket_count(void);

/* Bucket idx with its counter fields summed from the shards now.
 * Agent thread (or a test with no concurrent agent). */
struct pl_bucket *pl_bucket_at(uint32_t idx);
const uintptr_t *pl_bucket_frames(const struct pl_bucket *b);

/* In a fork child: the insert lock may be held by a thread that is gone. */
void pl_bucket_atfork_child(void);

/* Agent, once per tick: shifts every bucket's growth history. */
void pl_bucket_tick(void);
/* The stacks that rose most in the last pl_bucket_tick (agent thread). */
void pl_bucket_tick_top(struct hi_tick_top *out);

/* The buckets once among the top risers, with their live bytes at the
 * last pl_bucket_tick (hi_tick_kept). */
void pl_bucket_tick_kept(struct hi_tick_kept *out);

#endif /* HI_PAYLOAD_BUCKET_H */
