/* bucket.h - the stack table: one bucket per distinct sampled call stack.
 *
 * Bounded (PL_MAX_BUCKETS buckets, PL_MAX_BUCKET_FRAMES frames in all);
 * when full, a new stack is dropped and counted, nothing fails. Lookups are
 * lock-free (open addressing, slots only ever go from empty to published);
 * inserts take one lock. Counters are atomics; `growth` is written by the
 * agent thread only. Buckets are never removed during a session.
 */
#ifndef HI_PAYLOAD_BUCKET_H
#define HI_PAYLOAD_BUCKET_H

#include <stdint.h>

#include "common/proto.h"

#define PL_MAX_BUCKETS 65536u
#define PL_MAX_BUCKET_FRAMES (2u << 20)

struct pl_bucket {
    uint64_t hash;
    uint32_t frames_off, nframes; /* into the frame pool */
    int32_t first_tid;
    uint32_t pad;
    /* atomics, updated by the sampled alloc and free paths */
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

/* A sampled allocation: adds to the alloc totals, and to live when `live`
 * (it is in the address map). */
void pl_bucket_add(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp, int live);

/* A live sampled block was freed. */
void pl_bucket_sub_live(int32_t idx, uint64_t size, uint64_t est_bytes, uint64_t est_objs_fp);

/* Number of published buckets (indices 0..n-1 are valid). */
uint32_t pl_bucket_count(void);

struct pl_bucket *pl_bucket_at(uint32_t idx);
const uintptr_t *pl_bucket_frames(const struct pl_bucket *b);

/* In a fork child: the insert lock may be held by a thread that is gone. */
void pl_bucket_atfork_child(void);

/* Agent, once per tick: shifts every bucket's growth history. */
void pl_bucket_tick(void);

#endif /* HI_PAYLOAD_BUCKET_H */
