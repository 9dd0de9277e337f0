/* addrmap.c - striped chained hash of live sampled blocks + counting filter. */
#include "payload/addrmap.h"

#include <errno.h>
#include <string.h>

#include "payload/arena.h"
#include "payload/lock.h"

#define PL_STRIPE_ENTRIES (PL_MAX_LIVE / PL_ADDRMAP_STRIPES)
#define PL_HEAD_BITS 11 /* chains of <= 8 at full load; fewer pages touched */
#define PL_STRIPE_HEADS (1u << PL_HEAD_BITS)
#define PL_FILTER_SIZE (1u << PL_FILTER_BITS)

/* One stripe: all fields under `lock`. Entries are numbered 1..; `top` is
 * the high-water mark, freed entries go on the `free_head` list. */
struct pl_stripe {
    pl_lock_t lock;
    uint32_t free_head;
    uint32_t top;
    uint32_t live;
    uint32_t *heads;        /* PL_STRIPE_HEADS chain heads */
    struct pl_live *entries; /* PL_STRIPE_ENTRIES */
} __attribute__((aligned(64)));

uint8_t *pl_addrmap_filter; /* PL_FILTER_SIZE counts; cell writes under its stripe's lock */
static struct pl_stripe pl_stripes[PL_ADDRMAP_STRIPES];
static uint32_t *pl_heads_mem;
static struct pl_live *pl_entries_mem;

int pl_addrmap_init(void)
{
    if (pl_addrmap_filter)
        return 0;
    uint8_t *filter = pl_arena_map(PL_FILTER_SIZE);
    pl_heads_mem = pl_arena_map(sizeof(uint32_t) * PL_STRIPE_HEADS * PL_ADDRMAP_STRIPES);
    pl_entries_mem = pl_arena_map(sizeof(struct pl_live) * PL_MAX_LIVE);
    if (!filter || !pl_heads_mem || !pl_entries_mem)
        return -ENOMEM;
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
        pl_stripes[s].heads = pl_heads_mem + (size_t)s * PL_STRIPE_HEADS;
        pl_stripes[s].entries = pl_entries_mem + (size_t)s * PL_STRIPE_ENTRIES;
    }
    __atomic_store_n(&pl_addrmap_filter, filter, __ATOMIC_RELEASE);
    return 0;
}

void pl_addrmap_reset(void)
{
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        pl_lock(&pl_stripes[s].lock);
    pl_arena_clear(pl_addrmap_filter, PL_FILTER_SIZE);
    pl_arena_clear(pl_heads_mem, sizeof(uint32_t) * PL_STRIPE_HEADS * PL_ADDRMAP_STRIPES);
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
        struct pl_stripe *st = &pl_stripes[s];
        if (st->top)
            pl_arena_clear(st->entries, sizeof(struct pl_live) * st->top);
        st->top = st->live = st->free_head = 0;
    }
    for (unsigned s = PL_ADDRMAP_STRIPES; s-- > 0;)
        pl_unlock(&pl_stripes[s].lock);
}

/* Hash bits: top PL_FILTER_BITS select the filter cell; its top
 * PL_ADDRMAP_STRIPE_BITS select the stripe (so a cell belongs to exactly
 * one stripe and its lock); the next PL_HEAD_BITS select the chain. */
static inline unsigned stripe_of(uint64_t h)
{
    return (unsigned)(h >> (64 - PL_ADDRMAP_STRIPE_BITS));
}

static inline unsigned head_of(uint64_t h)
{
    return (unsigned)(h >> (64 - PL_ADDRMAP_STRIPE_BITS - PL_HEAD_BITS)) & (PL_STRIPE_HEADS - 1);
}

static inline uint8_t *cell_of(uint64_t h)
{
    return &pl_addrmap_filter[h >> (64 - PL_FILTER_BITS)];
}

/* Unlinks p from its chain; returns its entry number or 0. Stripe locked. */
static uint32_t unlink_entry(struct pl_stripe *st, unsigned head, uintptr_t p)
{
    uint32_t *link = &st->heads[head];
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

static void free_entry(struct pl_stripe *st, uint32_t idx, uint8_t *cell)
{
    st->entries[idx - 1].next = st->free_head;
    st->entries[idx - 1].ptr = 0;
    st->free_head = idx;
    st->live--;
    __atomic_store_n(cell, (uint8_t)(*cell - 1), __ATOMIC_RELAXED);
}

int pl_addrmap_insert(const struct pl_live *e, struct pl_live *stale)
{
    uint64_t h = pl_addr_hash(e->ptr);
    struct pl_stripe *st = &pl_stripes[stripe_of(h)];
    unsigned head = head_of(h);
    uint8_t *cell = cell_of(h);
    int ret = 0;

    pl_lock(&st->lock);
    if (*cell) {
        uint32_t old = unlink_entry(st, head, e->ptr);
        if (old) {
            *stale = st->entries[old - 1];
            free_entry(st, old, cell);
            ret = 1;
        }
    }
    uint32_t idx;
    if (*cell == UINT8_MAX) {
        ret = -ENOSPC;
        goto out;
    }
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
    n->next = st->heads[head];
    st->heads[head] = idx;
    st->live++;
    __atomic_store_n(cell, (uint8_t)(*cell + 1), __ATOMIC_RELAXED);
out:
    pl_unlock(&st->lock);
    return ret;
}

int pl_addrmap_take(const void *p, struct pl_live *out)
{
    uint64_t h = pl_addr_hash((uintptr_t)p);
    struct pl_stripe *st = &pl_stripes[stripe_of(h)];
    uint8_t *cell = cell_of(h);
    int found = 0;

    pl_lock(&st->lock);
    if (*cell) {
        uint32_t idx = unlink_entry(st, head_of(h), (uintptr_t)p);
        if (idx) {
            *out = st->entries[idx - 1];
            free_entry(st, idx, cell);
            found = 1;
        }
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
