/* addrmap.h - the sampled-address map: pointer -> (bucket, size, weights,
 * allocation time) for every live sampled block.
 *
 * free() of a pointer that was never sampled must cost almost nothing, so
 * a filter sits in front: one-byte counters, one per 4 KiB page of the
 * address space modulo 1 GiB (the pointer's bits 12..29, direct: a shift,
 * a mask and a compare in memory on the free path, pl_addrmap_maybe), each
 * the number of live samples in its pages. Only a non-zero counter takes
 * the stripe lock and walks a chain. The table is 256 KiB, but a program
 * touches only the counters of its heap's pages: 20 cache lines for a
 * 5 MiB heap, where a table indexed by 16-byte granules (tried first)
 * spread every heap over all of itself and missed the L1 cache on three
 * frees in four (callgrind's cache simulation); an earlier 2 MiB counting
 * filter missed cache and TLB on most frees, about a fifth of the target's
 * time at the default rate (perf); the hashed bitmap of chain heads before
 * this one cost 19 instructions a free (callgrind) where this costs 6.
 * A false "maybe" (a free in a page that holds a live sample) costs a
 * lock-free look at p's chain head (pl_addrmap_chain_at; the lock and the
 * walk only when that chain is not empty, 21 instructions where it took
 * about 95): at the default rate about 4 KiB / 512 KiB = 0.8% of frees
 * while the heap is under 1 GiB, then as many as the old bitmap had (one
 * counter per 2^18 of the heap). A counter that reaches 255 sticks there:
 * it then answers "maybe" for good, never a wrong "no". The counter for a
 * pointer p is visible to the thread freeing p because p itself travelled
 * from the allocating thread to it after the insert.
 *
 * Where an entry lives: its stripe comes from its filter counter's index
 * (the pointer's bits 26..29 and 12..13), so each counter belongs to one
 * stripe and changes under that stripe's lock (plain stores, no atomic
 * read-modify-write on the sampled path), and a 64 MiB region (one of
 * glibc's per-thread arenas; jemalloc and tcmalloc also keep threads'
 * spans apart) takes 4 stripes of 64: threads sampling at once mostly
 * touch different cache lines and locks (with random striping, two
 * threads at RATE=1 took every other line from each other). Within the
 * stripe, the chain is picked by a hash of the pointer.
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

#define PL_ADDRMAP_FILTER_BITS 18 /* 256 KiB of counters, one per page mod 1 GiB */
#define PL_ADDRMAP_FILTER_SHIFT 12 /* 4 KiB pages */
#define PL_ADDRMAP_FILTER_MAX 255  /* a counter there sticks */

/* The filter's counters (2^PL_ADDRMAP_FILTER_BITS bytes, mmap'ed once). */
extern uint8_t *pl_addrmap_filter __attribute__((visibility("hidden")));

/* Filter counter of p: its page, modulo 1 GiB. */
static inline uint32_t pl_addrmap_filter_index(uintptr_t p)
{
    return (uint32_t)(p >> PL_ADDRMAP_FILTER_SHIFT) & ((1u << PL_ADDRMAP_FILTER_BITS) - 1);
}

/* Fibonacci hashing for the chain within a stripe (sampled path only). */
static inline uint64_t pl_addr_hash(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull;
}

/* Stripe of p, from its filter index (so each counter has one stripe):
 * its 64 MiB region's low 4 bits (bits 26..29) and its page's low 2 bits,
 * so a region spreads over 4 stripes and 16384 chains, as many as the
 * hashed layout before gave it. */
static inline uint32_t pl_addr_stripe_of(uintptr_t p)
{
    uint32_t i = pl_addrmap_filter_index(p);
    return (i >> (PL_ADDRMAP_FILTER_BITS - PL_ADDRMAP_STRIPE_BITS + 2)) << 2 | (i & 3);
}

/* Chain head of p: its stripe and a hash of p; the top
 * PL_ADDRMAP_STRIPE_BITS of a head are its stripe. */
static inline uint32_t pl_addr_head_of(uintptr_t p)
{
    uint32_t low = (uint32_t)(pl_addr_hash(p) >> (64 - PL_ADDRMAP_HEAD_BITS + PL_ADDRMAP_STRIPE_BITS));
    return pl_addr_stripe_of(p) << (PL_ADDRMAP_HEAD_BITS - PL_ADDRMAP_STRIPE_BITS) | low;
}

/* Lock-free: may p be in the map? False is definite. */
static inline int pl_addrmap_maybe(const void *p)
{
    /* A plain load, not __atomic: GCC then compares the byte in memory
     * (cmpb) instead of loading and testing it. A byte load is never
     * torn, and the hooks read it once. */
    return pl_addrmap_filter[pl_addrmap_filter_index((uintptr_t)p)] != 0;
}

/* Chain heads (2^PL_ADDRMAP_HEAD_BITS, stripe-major): for prefetching and
 * for the lock-free second look below. */
extern uint32_t *pl_addrmap_heads;

/* Lock-free second look, after pl_addrmap_maybe said yes: may p be in the
 * map? False (p's chain is empty) is definite: had p been inserted, its
 * insert happened before p reached the thread now freeing it, and p's
 * chain cannot be empty while p is on it (unlinking other entries never
 * stores 0 in a head that still leads to p). Heads are stored atomically
 * (addrmap.c), so this load is never torn. A page that holds a live
 * sample costs its other frees this load instead of the guard, the stripe
 * lock and the walk. */
static inline int pl_addrmap_chain_at(uint32_t head)
{
    return __atomic_load_n(&pl_addrmap_heads[head], __ATOMIC_RELAXED) != 0;
}

static inline int pl_addrmap_chain_maybe(const void *p)
{
    return pl_addrmap_chain_at(pl_addr_head_of((uintptr_t)p));
}

/* The free path found p's counter set: start loading its chain head now (it
 * is written under the stripe lock soon) so the miss overlaps the
 * allocator's own work instead of adding to it. */
static inline void pl_addrmap_prefetch(const void *p)
{
    __builtin_prefetch(&pl_addrmap_heads[pl_addr_head_of((uintptr_t)p)], 1, 3);
}

/* Before an insert of p: loads its chain head and the entry the insert
 * will take, while the caller unwinds. Returns p's chain head
 * (pl_addr_head_of), for pl_addrmap_insert_at. */
uint32_t pl_addrmap_prefetch_insert(const void *p);

/* Maps the tables once. 0 or -ENOMEM. */
int pl_addrmap_init(void);

/* Empties the map for a new session. */
void pl_addrmap_reset(void);

/* Inserts e (e->ptr is the key). If an entry for the same pointer is still
 * there (its free was missed, e.g. freed inside a guard), it is replaced and
 * copied to *stale; returns 1 then. 0 on insert, -ENOSPC when full.
 * Caller holds the reentrancy guard. */
int pl_addrmap_insert(const struct pl_live *e, struct pl_live *stale);

/* The same, with e->ptr's chain head already computed (the sampled path
 * has it from the prefetch): head == pl_addr_head_of(e->ptr). */
int pl_addrmap_insert_at(uint32_t head, const struct pl_live *e, struct pl_live *stale);

/* Removes p; copies its entry to *out and returns 1, or 0 if absent.
 * Caller holds the reentrancy guard. */
int pl_addrmap_take(const void *p, struct pl_live *out);

/* The same with head == pl_addr_head_of(p) (the free path has it from
 * pl_addrmap_chain_at). */
int pl_addrmap_take_at(uint32_t head, const void *p, struct pl_live *out);

/* Calls fn for every live entry, one stripe at a time under its lock
 * (fn must not call into the map or the allocator). Agent thread. */
void pl_addrmap_foreach(void (*fn)(const struct pl_live *e, void *arg), void *arg);

/* In a fork child: stripe locks may be held by threads that are gone. */
void pl_addrmap_atfork_child(void);

/* Live entries (approximate while others insert). */
uint64_t pl_addrmap_count(void);

#endif /* HI_PAYLOAD_ADDRMAP_H */
