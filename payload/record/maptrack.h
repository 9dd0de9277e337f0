/* maptrack.h - the sampled anonymous mappings still live: address ranges
 * -> (bucket, weights, time), for munmap and mremap of a whole mapping or
 * of any part of it.
 *
 * Unlike a malloc'ed block, a mapping can lose a part (munmap of its head,
 * its tail, a hole in the middle) or be replaced by a MAP_FIXED mapping, so
 * the key is a range, not a pointer. The table is one sorted array of
 * disjoint ranges (the kernel never has two mappings at one address; a
 * range we still hold where a new mapping appears was unmapped behind our
 * back, by a module we do not patch or a raw syscall, and is dropped then).
 * A binary search finds a range; an insert or a removal moves the entries
 * after it (a memmove of at most PL_MAX_MAPS * 48 bytes, a few microseconds
 * at 10,000 live sampled mappings, on a path that has just made a system
 * call and will fault in the new pages). Bounded: PL_MAX_MAPS pieces; when
 * full, a new sample is dropped and counted.
 *
 * A removed part takes its share of the piece's weights with it: the raw
 * bytes exactly, the estimated bytes in proportion (integer arithmetic, the
 * estimate of what remains never drops below its raw bytes). The object
 * (and its estimate) stays with the piece holding the mapping's first page
 * until the last byte is gone; a hole gives the tail piece no object.
 *
 * One spin lock; every caller holds the thread's reentrancy guard.
 */
#ifndef HI_PAYLOAD_MAPTRACK_H
#define HI_PAYLOAD_MAPTRACK_H

#include <stdint.h>

#define PL_MAX_MAPS 16384u

struct pl_mapent {
    uintptr_t lo, hi;     /* [lo, hi), page aligned */
    uint64_t est_bytes;   /* stands for this many bytes (>= hi - lo) */
    uint64_t est_objs_fp; /* objects in PL_OBJ_FP_ONE units; 0 when objs == 0 */
    uint64_t time_ns;     /* when it was mapped */
    int32_t bucket;
    uint32_t objs;        /* 1 for the piece holding the mapping's object */
};

/* Maps the table once. 0 or -ENOMEM. */
int pl_maptrack_init(void);

/* Empties the table for a new session (the buckets are reset too). */
void pl_maptrack_reset(void);

/* Records a sampled mapping. Ranges of older entries it overlaps are taken
 * out first (their buckets lose those bytes). 0, or -ENOSPC when full. */
int pl_maptrack_insert(const struct pl_mapent *e);

/* [lo, hi) was unmapped (or replaced, or moved away): every piece in it is
 * taken out and its bucket loses what it stood for. Returns the number of
 * pieces touched. Lock-free and cheap when nothing is tracked. */
unsigned pl_maptrack_cut(uintptr_t lo, uintptr_t hi);

/* pl_maptrack_cut that also copies the parts it took out (at most max,
 * with their weights) to out, so that pl_maptrack_put_back can undo it
 * when the call they were taken out for fails (mremap). Returns the number
 * copied; parts beyond max stay out (an underestimate). */
unsigned pl_maptrack_take(uintptr_t lo, uintptr_t hi, struct pl_mapent *out, unsigned max);

/* Puts parts taken by pl_maptrack_take back, with their live weights. */
void pl_maptrack_put_back(const struct pl_mapent *parts, unsigned n);

/* True when a tracked piece overlaps [lo, hi). */
int pl_maptrack_overlaps(uintptr_t lo, uintptr_t hi);

/* Calls fn for every piece under the lock (fn must not call into the
 * table or the allocator). Agent thread. */
void pl_maptrack_foreach(void (*fn)(const struct pl_mapent *e, void *arg), void *arg);

/* Pieces tracked now. */
uint64_t pl_maptrack_count(void);

/* In a fork child: the lock may be held by a thread that is gone. */
void pl_maptrack_atfork_child(void);

#endif /* HI_PAYLOAD_MAPTRACK_H */
