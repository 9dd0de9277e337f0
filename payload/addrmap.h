/* addrmap.h - the sampled-address map: pointer -> (bucket, size, weights,
 * allocation time) for every live sampled block.
 *
 * free() of a pointer that was never sampled must cost almost nothing, so
 * a bitmap sits in front: one bit per chain head, set while that chain is
 * not empty. The free path reads that bit without any lock
 * (pl_addrmap_maybe); only a set bit takes the stripe lock. The bitmap is
 * 32 KiB (8 pages), so the read stays in cache and in the TLB: an earlier
 * 2 MiB counting filter made that one load a cache and TLB miss on most
 * frees, about a fifth of the target's time at the default rate (perf).
 * The bit for a pointer p is visible to the thread freeing p because p
 * itself travelled from the allocating thread to it after the insert.
 *
 * Bounded: PL_MAX_LIVE entries in PL_ADDRMAP_STRIPES stripes; a full stripe
 * drops the sample (the caller counts it).
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

/* One bit per chain head (2^PL_ADDRMAP_HEAD_BITS bits); a byte's 8 heads
 * belong to one stripe, whose lock orders the writes to it. */
extern uint8_t *pl_addrmap_bits;

/* Fibonacci hashing: one multiply on the free path; only the top bits are
 * used, and those depend on every bit of the (16-byte aligned) pointer. */
static inline uint64_t pl_addr_hash(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull;
}

/* Chain head of a hash: its top PL_ADDRMAP_STRIPE_BITS are the stripe. */
static inline uint32_t pl_addr_head(uint64_t h)
{
    return (uint32_t)(h >> (64 - PL_ADDRMAP_HEAD_BITS));
}

/* Lock-free: may p be in the map? False is definite. */
static inline int pl_addrmap_maybe(const void *p)
{
    uint32_t g = pl_addr_head(pl_addr_hash((uintptr_t)p));
    return (__atomic_load_n(&pl_addrmap_bits[g >> 3], __ATOMIC_RELAXED) >> (g & 7)) & 1;
}

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
