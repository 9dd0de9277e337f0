/* addrmap.h - the sampled-address map: pointer -> (bucket, size, weights,
 * allocation time) for every live sampled block.
 *
 * free() of a pointer that was never sampled must cost almost nothing, so
 * a filter sits in front: a direct-mapped table of 32 KiB one-byte
 * counters, indexed by the pointer's bits 4..18 (no hash: a shift, a mask
 * and one load on the free path, pl_addrmap_maybe), each the number of
 * live entries whose pointer has that index. Only a non-zero counter takes
 * the stripe lock and walks a chain. 32 KiB stays in cache and in the TLB
 * (an earlier 2 MiB counting filter missed both on most frees, about a
 * fifth of the target's time at the default rate, perf), and the old
 * hashed bitmap of chain heads cost 19 instructions a free (callgrind)
 * where this costs 6. A counter that reaches 255 sticks there: it then
 * answers "maybe" for good, which costs a lock, never a wrong answer.
 * Entries of different stripes share counters, so they change with
 * atomic read-modify-writes (on the sampled path only). The counter for a
 * pointer p is visible to the thread freeing p because p itself
 * travelled from the allocating thread to it after the insert.
 *
 * Where an entry lives: the top bits of its chain head (so its stripe,
 * and its chain) come from the pointer's 64 MiB region,
 * the rest from the pointer itself. Allocators give each thread its own
 * regions (glibc's per-thread arenas are 64 MiB heaps; jemalloc and
 * tcmalloc keep thread caches of their own spans), so threads sampling
 * at once mostly touch different cache lines and locks here: with random
 * striping, two threads at RATE=1 took every other line from each other.
 *
 * Bounded: PL_MAX_LIVE entries in one pool, handed to stripes in chunks;
 * when it is used up the sample is dropped (the caller counts it).
 */
#ifndef HI_PAYLOAD_ADDRMAP_H
#define HI_PAYLOAD_ADDRMAP_H

#include <stdint.h>

#define PL_MAX_LIVE (1u << 20)
#define PL_ADDRMAP_STRIPE_BITS 6
#define PL_ADDRMAP_STRIPES (1u << PL_ADDRMAP_STRIPE_BITS)
#define PL_ADDRMAP_HEAD_BITS 18 /* chain heads in all: 4 entries a chain at PL_MAX_LIVE */

struct pl_live {
    uintptr_t ptr;
    uint64_t size;
    uint64_t est_bytes;
    uint64_t est_objs_fp;
    uint64_t time_ns;
    int32_t bucket;
    uint32_t next; /* chain: entry index + 1 within the stripe, 0 = end */
};

#define PL_ADDRMAP_FILTER_BITS 15 /* 32 KiB of counters */
#define PL_ADDRMAP_FILTER_MAX 255  /* a counter there sticks */

/* The filter's counters (2^PL_ADDRMAP_FILTER_BITS bytes, mmap'ed once). */
extern uint8_t *pl_addrmap_filter __attribute__((visibility("hidden")));

/* Fibonacci hashing for the chain heads (the sampled path only). */
static inline uint64_t pl_addr_hash(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull;
}

#define PL_ADDRMAP_GROUP_BITS 4 /* regions spread over 16 groups of 4 stripes */

/* Chain head of p: PL_ADDRMAP_GROUP_BITS from p's 64 MiB region, the rest
 * from p; its top PL_ADDRMAP_STRIPE_BITS are the stripe. */
static inline uint32_t pl_addr_head_of(uintptr_t p)
{
    uint32_t group = (uint32_t)(((uint64_t)(p >> 26) * 0x9E3779B97F4A7C15ull) >> (64 - PL_ADDRMAP_GROUP_BITS));
    uint32_t low = (uint32_t)(pl_addr_hash(p) >> (64 - PL_ADDRMAP_HEAD_BITS + PL_ADDRMAP_GROUP_BITS));
    return group << (PL_ADDRMAP_HEAD_BITS - PL_ADDRMAP_GROUP_BITS) | low;
}

/* Filter counter of p: bits 4..18 (blocks are 16-byte aligned, so
 * neighbouring blocks take neighbouring counters). */
static inline uint32_t pl_addrmap_filter_index(uintptr_t p)
{
    return (uint32_t)(p >> 4) & ((1u << PL_ADDRMAP_FILTER_BITS) - 1);
}

/* Lock-free: may p be in the map? False is definite. */
static inline int pl_addrmap_maybe(const void *p)
{
    /* A plain load, not __atomic: GCC then compares the byte in memory
     * (cmpb) instead of loading and testing it. A byte load is never
     * torn, and the hooks read it once. */
    return pl_addrmap_filter[pl_addrmap_filter_index((uintptr_t)p)] != 0;
}

/* Chain heads (2^PL_ADDRMAP_HEAD_BITS, stripe-major), for prefetching. */
extern uint32_t *pl_addrmap_heads;

/* The free path found p's counter set: start loading its chain head now (it
 * is written under the stripe lock soon) so the miss overlaps the
 * allocator's own work instead of adding to it. */
static inline void pl_addrmap_prefetch(const void *p)
{
    __builtin_prefetch(&pl_addrmap_heads[pl_addr_head_of((uintptr_t)p)], 1, 3);
}

/* Before an insert of p: loads its chain head and the entry the insert
 * will take, while the caller unwinds. */
void pl_addrmap_prefetch_insert(const void *p);

/* Maps the tables once. 0 or -ENOMEM. */
int pl_addrmap_init(void);

/* Empties the map for a new session. */
void pl_addrmap_reset(void);

/* Inserts e (e->ptr is the key). If an entry for the same pointer is still
 * there (its free was missed, e.g. freed inside a guard), it is replaced and
 * copied to *stale; returns 1 then. 0 on insert, -ENOSPC when full.
 * Caller holds the reentrancy guard. */
int pl_addrmap_insert(const struct pl_live *e, struct pl_live *stale);

/* Removes p; copies its entry to *out and returns 1, or 0 if absent.
 * Caller holds the reentrancy guard. */
int pl_addrmap_take(const void *p, struct pl_live *out);

/* Calls fn for every live entry, one stripe at a time under its lock
 * (fn must not call into the map or the allocator). Agent thread. */
void pl_addrmap_foreach(void (*fn)(const struct pl_live *e, void *arg), void *arg);

/* In a fork child: stripe locks may be held by threads that are gone. */
void pl_addrmap_atfork_child(void);

/* Live entries (approximate while others insert). */
uint64_t pl_addrmap_count(void);

#endif /* HI_PAYLOAD_ADDRMAP_H */
