/* addrmap.c - striped chained hash of live sampled blocks + head bitmap. */
#include "payload/addrmap.h"

#include <errno.h>
#include <string.h>

#include "payload/arena.h"
#include "payload/lock.h"

#define PL_STRIPE_ENTRIES (PL_MAX_LIVE / PL_ADDRMAP_STRIPES)
#define PL_HEADS (1u << PL_ADDRMAP_HEAD_BITS)
#define PL_STRIPE_HEADS (PL_HEADS / PL_ADDRMAP_STRIPES)

_Static_assert(PL_STRIPE_HEADS >= 8, "a bitmap byte must not straddle two stripes");

/* One stripe: all fields under `lock`. Entries are numbered 1..; `top` is
 * the high-water mark, freed entries go on the `free_head` list. */
struct pl_stripe {
    pl_lock_t lock;
    uint32_t free_head;
    uint32_t top;
    uint32_t live;
    struct pl_live *entries; /* PL_STRIPE_ENTRIES */
} __attribute__((aligned(64)));

uint8_t *pl_addrmap_bits;              /* PL_HEADS bits; a byte is written under its stripe's lock */
static struct pl_stripe pl_stripes[PL_ADDRMAP_STRIPES];
static uint32_t *pl_heads;             /* PL_HEADS chain heads, stripe-major (stripe locks) */
static struct pl_live *pl_entries_mem;

int pl_addrmap_init(void)
{
    if (pl_addrmap_bits)
        return 0;
    uint8_t *bits = pl_arena_map(PL_HEADS / 8);
    pl_heads = pl_arena_map(sizeof(uint32_t) * PL_HEADS);
    pl_entries_mem = pl_arena_map(sizeof(struct pl_live) * PL_MAX_LIVE);
    if (!bits || !pl_heads || !pl_entries_mem)
        return -ENOMEM;
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        pl_stripes[s].entries = pl_entries_mem + (size_t)s * PL_STRIPE_ENTRIES;
    __atomic_store_n(&pl_addrmap_bits, bits, __ATOMIC_RELEASE);
    return 0;
}

void pl_addrmap_reset(void)
{
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        pl_lock(&pl_stripes[s].lock);
    pl_arena_clear(pl_addrmap_bits, PL_HEADS / 8);
    pl_arena_clear(pl_heads, sizeof(uint32_t) * PL_HEADS);
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
        struct pl_stripe *st = &pl_stripes[s];
        if (st->top)
            pl_arena_clear(st->entries, sizeof(struct pl_live) * st->top);
        st->top = st->live = st->free_head = 0;
    }
    for (unsigned s = PL_ADDRMAP_STRIPES; s-- > 0;)
        pl_unlock(&pl_stripes[s].lock);
}

static inline struct pl_stripe *stripe_of(uint32_t head)
{
    return &pl_stripes[head / PL_STRIPE_HEADS];
}

/* Bitmap updates: the byte belongs to the caller's (locked) stripe; the
 * relaxed store is for the lock-free readers. */
static inline void bit_set(uint32_t head)
{
    uint8_t *b = &pl_addrmap_bits[head >> 3];
    __atomic_store_n(b, (uint8_t)(*b | (1u << (head & 7))), __ATOMIC_RELAXED);
}

static inline void bit_clear(uint32_t head)
{
    uint8_t *b = &pl_addrmap_bits[head >> 3];
    __atomic_store_n(b, (uint8_t)(*b & ~(1u << (head & 7))), __ATOMIC_RELAXED);
}

/* Unlinks p from its chain; returns its entry number or 0. Stripe locked. */
static uint32_t unlink_entry(struct pl_stripe *st, uint32_t head, uintptr_t p)
{
    uint32_t *link = &pl_heads[head];
    while (*link) {
        struct pl_live *e = &st->entries[*link - 1];
        if (e->ptr == p) {
            uint32_t idx = *link;
            *link = e->next;
            return idx;
        }
        link = &e->next;
    }
    return 0;
}

static void free_entry(struct pl_stripe *st, uint32_t idx, uint32_t head)
{
    st->entries[idx - 1].next = st->free_head;
    st->entries[idx - 1].ptr = 0;
    st->free_head = idx;
    st->live--;
    if (pl_heads[head] == 0)
        bit_clear(head);
}

int pl_addrmap_insert(const struct pl_live *e, struct pl_live *stale)
{
    uint32_t head = pl_addr_head(pl_addr_hash(e->ptr));
    struct pl_stripe *st = stripe_of(head);
    int ret = 0;

    pl_lock(&st->lock);
    if (pl_heads[head]) {
        uint32_t old = unlink_entry(st, head, e->ptr);
        if (old) {
            *stale = st->entries[old - 1];
            free_entry(st, old, head);
            ret = 1;
        }
    }
    uint32_t idx;
    if (st->free_head) {
        idx = st->free_head;
        st->free_head = st->entries[idx - 1].next;
    } else if (st->top < PL_STRIPE_ENTRIES) {
        idx = ++st->top;
    } else {
        ret = -ENOSPC;
        goto out;
    }
    struct pl_live *n = &st->entries[idx - 1];
    *n = *e;
    n->next = pl_heads[head];
    pl_heads[head] = idx;
    st->live++;
    bit_set(head);
out:
    pl_unlock(&st->lock);
    return ret;
}

int pl_addrmap_take(const void *p, struct pl_live *out)
{
    uint32_t head = pl_addr_head(pl_addr_hash((uintptr_t)p));
    struct pl_stripe *st = stripe_of(head);
    int found = 0;

    pl_lock(&st->lock);
    uint32_t idx = unlink_entry(st, head, (uintptr_t)p);
    if (idx) {
        *out = st->entries[idx - 1];
        free_entry(st, idx, head);
        found = 1;
    }
    pl_unlock(&st->lock);
    return found;
}

void pl_addrmap_foreach(void (*fn)(const struct pl_live *e, void *arg), void *arg)
{
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
        struct pl_stripe *st = &pl_stripes[s];
        pl_lock(&st->lock);
        for (uint32_t i = 0; i < st->top; i++)
            if (st->entries[i].ptr)
                fn(&st->entries[i], arg);
        pl_unlock(&st->lock);
    }
}

uint64_t pl_addrmap_count(void)
{
    uint64_t n = 0;
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        n += __atomic_load_n(&pl_stripes[s].live, __ATOMIC_RELAXED);
    return n;
}

void pl_addrmap_atfork_child(void)
{
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        pl_stripes[s].lock.held = 0;
}
