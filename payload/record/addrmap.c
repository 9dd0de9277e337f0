/* addrmap.c - striped chained hash of live sampled blocks + the free path's filter. */
#include "payload/record/addrmap.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "payload/sys/sys.h"

#define PL_HEADS (1u << PL_ADDRMAP_HEAD_BITS)
#define PL_STRIPE_HEADS (PL_HEADS / PL_ADDRMAP_STRIPES)
#define PL_CHUNK 64u /* entries a stripe takes from the pool at once */
#define FILTER_BYTES (1u << PL_ADDRMAP_FILTER_BITS)

_Static_assert(PL_ADDRMAP_FILTER_BITS >= PL_ADDRMAP_STRIPE_BITS, "a stripe is a run of filter counters");

_Static_assert(PL_MAX_LIVE % PL_CHUNK == 0, "whole chunks");

/* One stripe: all fields under `lock`. Entries are numbered 1.. in the
 * pool; a stripe's freed entries go on its `free_head` list, and it takes
 * fresh ones PL_CHUNK at a time ([next, end)), so its entries sit together
 * in memory. */
struct pl_stripe {
    pl_lock_t lock;
    uint32_t free_head;
    uint32_t next, end; /* fresh entries not handed out yet */
    uint32_t live;
    uint32_t pages; /* bit k: the stripe's k-th page of heads got an entry since the reset */
} __attribute__((aligned(64)));

/* Heads a page holds, for the stripes' page bits. */
#define HEADS_PER_PAGE (4096u / sizeof(uint32_t))
_Static_assert(PL_STRIPE_HEADS / HEADS_PER_PAGE <= 32, "a stripe's pages fit its bits");

uint8_t *pl_addrmap_filter;      /* 2^PL_ADDRMAP_FILTER_BITS counters; one stripe's lock each */
uint32_t *pl_addrmap_heads;      /* PL_HEADS chain heads, stripe-major (stripe locks) */
#define pl_heads pl_addrmap_heads
static struct pl_stripe pl_stripes[PL_ADDRMAP_STRIPES];
static struct pl_live *pl_pool;  /* PL_MAX_LIVE entries, numbered from 1 */
static uint32_t pl_pool_top;     /* entries ever handed out in chunks (atomic) */

int pl_addrmap_init(void)
{
    if (pl_addrmap_filter)
        return 0;
    uint8_t *filter = pl_arena_map_child_empty(FILTER_BYTES);
    pl_heads = pl_arena_map_child_empty(sizeof(uint32_t) * PL_HEADS);
    pl_pool = pl_arena_map_child_empty(sizeof(struct pl_live) * PL_MAX_LIVE);
    if (!filter || !pl_heads || !pl_pool)
        return -ENOMEM;
    __atomic_store_n(&pl_addrmap_filter, filter, __ATOMIC_RELEASE);
    return 0;
}

void pl_addrmap_reset(void)
{
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        pl_lock(&pl_stripes[s].lock);
    pl_arena_clear(pl_addrmap_filter, FILTER_BYTES);
    pl_arena_clear(pl_heads, sizeof(uint32_t) * PL_HEADS);
    uint32_t top = __atomic_load_n(&pl_pool_top, __ATOMIC_RELAXED);
    if (top > PL_MAX_LIVE) /* fetch_adds past the end, see take_entry */
        top = PL_MAX_LIVE;
    if (top)
        pl_arena_clear(pl_pool, sizeof(struct pl_live) * top);
    __atomic_store_n(&pl_pool_top, 0, __ATOMIC_RELAXED);
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
        struct pl_stripe *st = &pl_stripes[s];
        st->live = st->free_head = st->next = st->end = st->pages = 0;
    }
    for (unsigned s = PL_ADDRMAP_STRIPES; s-- > 0;)
        pl_unlock(&pl_stripes[s].lock);
}

static inline struct pl_stripe *stripe_of(uint32_t head)
{
    return &pl_stripes[head / PL_STRIPE_HEADS];
}

/* For stealing from another stripe while holding our own lock: never
 * waits, so two stripes stealing from each other cannot deadlock. */
static inline int stripe_trylock(pl_lock_t *l)
{
    return !__atomic_load_n(&l->held, __ATOMIC_RELAXED) && pl_trylock(l);
}

static inline struct pl_live *entry(uint32_t idx)
{
    return &pl_pool[idx - 1];
}

uint32_t pl_addrmap_prefetch_insert(const void *p)
{
    uint32_t head = pl_addr_head_of((uintptr_t)p);
    struct pl_stripe *st = stripe_of(head);
    __builtin_prefetch(&pl_heads[head], 1, 3);
    /* racy reads of the stripe: only a hint */
    uint32_t idx = __atomic_load_n(&st->free_head, __ATOMIC_RELAXED);
    if (!idx)
        idx = __atomic_load_n(&st->next, __ATOMIC_RELAXED) + 1;
    if (idx && idx <= PL_MAX_LIVE)
        __builtin_prefetch(entry(idx), 1, 3);
    return head;
}

/* Filter updates: p's counter belongs to p's stripe, which the caller has
 * locked (so a reset, which holds every stripe lock, sees none half done);
 * the store is atomic for the lock-free readers. At PL_ADDRMAP_FILTER_MAX
 * a counter sticks (neither goes up nor down): the free path then always
 * takes the precise look, never misses a live entry. */
static void filter_add(uintptr_t p, int delta)
{
    uint8_t *c = &pl_addrmap_filter[pl_addrmap_filter_index(p)];
    uint8_t v = *c;
    if (v != PL_ADDRMAP_FILTER_MAX)
        __atomic_store_n(c, (uint8_t)(v + delta), __ATOMIC_RELAXED);
}

/* Unlinks p from its chain; returns its entry number or 0. Stripe locked. */
static uint32_t unlink_entry(uint32_t head, uintptr_t p)
{
    uint32_t *link = &pl_heads[head];
    while (*link) {
        struct pl_live *e = entry(*link);
        if (e->ptr == p) {
            uint32_t idx = *link;
            /* atomic: heads are read without the lock (pl_addrmap_chain_maybe) */
            __atomic_store_n(link, e->next, __ATOMIC_RELAXED);
            return idx;
        }
        link = &e->next;
    }
    return 0;
}

static void free_entry(struct pl_stripe *st, uint32_t idx)
{
    filter_add(entry(idx)->ptr, -1);
    entry(idx)->next = st->free_head;
    entry(idx)->ptr = 0;
    st->free_head = idx;
    st->live--;
}

/* A free entry for stripe st (locked), or 0 when the pool is used up:
 * its own free list, a fresh chunk, or, with the pool used up, an entry
 * another stripe freed (trylock: we hold our own lock already). */
static uint32_t take_entry(struct pl_stripe *st)
{
    uint32_t idx = st->free_head;
    if (idx) {
        st->free_head = entry(idx)->next;
        return idx;
    }
    if (st->next == st->end) {
        /* Once used up, the counter is not bumped again: it can run past
         * the end only by one chunk per thread racing here (reset caps it),
         * never wrap around. */
        uint32_t top = __atomic_load_n(&pl_pool_top, __ATOMIC_RELAXED);
        /* A fresh chunk is new memory: claimed from the budget first
         * (arena.h); at the cap, only freed entries are used again. */
        bool at_cap = false;
        if (top < PL_MAX_LIVE && pl_arena_claim(PL_CHUNK * sizeof(struct pl_live)) < 0)
            at_cap = true;
        else if (top < PL_MAX_LIVE)
            top = __atomic_fetch_add(&pl_pool_top, PL_CHUNK, __ATOMIC_RELAXED);
        if (at_cap || top >= PL_MAX_LIVE) {
            for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++) {
                struct pl_stripe *o = &pl_stripes[s];
                if (o == st || !o->free_head || !stripe_trylock(&o->lock))
                    continue;
                idx = o->free_head;
                if (idx)
                    o->free_head = entry(idx)->next;
                pl_unlock(&o->lock);
                if (idx)
                    return idx;
            }
            if (at_cap)
                pl_arena_budget_drop();
            return 0;
        }
        st->next = top;
        st->end = top + PL_CHUNK;
    }
    return ++st->next;
}

int pl_addrmap_insert(const struct pl_live *e, struct pl_live *stale)
{
    return pl_addrmap_insert_at(pl_addr_head_of(e->ptr), e, stale);
}

int pl_addrmap_insert_at(uint32_t head, const struct pl_live *e, struct pl_live *stale)
{
    struct pl_stripe *st = stripe_of(head);
    int ret = 0;

    pl_lock(&st->lock);
    if (pl_heads[head]) {
        uint32_t old = unlink_entry(head, e->ptr);
        if (old) {
            *stale = *entry(old);
            free_entry(st, old);
            ret = 1;
        }
    }
    uint32_t idx = take_entry(st);
    if (!idx) {
        ret = -ENOSPC;
        goto out;
    }
    struct pl_live *n = entry(idx);
    *n = *e;
    n->next = pl_heads[head];
    __atomic_store_n(&pl_heads[head], idx, __ATOMIC_RELAXED);
    st->live++;
    st->pages |= 1u << (head % PL_STRIPE_HEADS / HEADS_PER_PAGE);
    filter_add(e->ptr, 1);
out:
    pl_unlock(&st->lock);
    return ret;
}

int pl_addrmap_take(const void *p, struct pl_live *out)
{
    return pl_addrmap_take_at(pl_addr_head_of((uintptr_t)p), p, out);
}

int pl_addrmap_take_at(uint32_t head, const void *p, struct pl_live *out)
{
    struct pl_stripe *st = stripe_of(head);
    int found = 0;

    pl_lock(&st->lock);
    uint32_t idx = unlink_entry(head, (uintptr_t)p);
    if (idx) {
        *out = *entry(idx);
        free_entry(st, idx);
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
        /* Only the pages of heads that got an entry are read: in a
         * followed fork child (its tables released, MADV_DONTNEED) the walk
         * faulted in every page of them for nothing, 12% of a child's
         * profile at exit; then still 4 pages of each stripe a sample
         * went to (a PostgreSQL backend: ~30 faults at its end). */
        for (uint32_t pg = 0; st->live && pg < PL_STRIPE_HEADS / HEADS_PER_PAGE; pg++) {
            if (!(st->pages & (1u << pg)))
                continue;
            uint32_t h0 = s * PL_STRIPE_HEADS + pg * HEADS_PER_PAGE;
            for (uint32_t h = h0; h < h0 + HEADS_PER_PAGE; h++)
                for (uint32_t i = pl_heads[h]; i; i = entry(i)->next)
                    fn(entry(i), arg);
        }
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

PL_FORK_TEXT void pl_addrmap_atfork_child(void)
{
    /* Written only where a parent thread held it: a write copies the page
     * into the child (every fork after an attach paid for them). */
    for (unsigned s = 0; s < PL_ADDRMAP_STRIPES; s++)
        if (__atomic_load_n(&pl_stripes[s].lock.held, __ATOMIC_RELAXED))
            pl_stripes[s].lock.held = 0;
}
