/* payload_record_addrmap.c - the sampled-address map (payload/record/addrmap.h): the
 * filter never says "absent" for a live entry (also past a counter's
 * saturation),
 * take/insert under 8 threads, replacement of a stale entry, bounds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "payload/record/addrmap.h"

#define NTHREADS 8
#define PER_THREAD 40000
#define SPACING 64 /* 64 blocks a page: no filter counter saturates (that has a test of its own) */

static void setup(void)
{
    cr_assert_eq(pl_addrmap_init(), 0);
    pl_addrmap_reset();
}

static struct pl_live entry(uintptr_t p, int32_t bucket)
{
    struct pl_live e = { p, 16, 32, 2, 1000, bucket, 0 };
    return e;
}

Test(addrmap, insert_take, .init = setup)
{
    struct pl_live e = entry(0x1000, 7), out, stale;
    cr_expect_not(pl_addrmap_maybe((void *)0x1000));
    cr_assert_eq(pl_addrmap_insert(&e, &stale), 0);
    cr_expect(pl_addrmap_maybe((void *)0x1000));
    cr_expect_eq(pl_addrmap_count(), 1);
    cr_expect_eq(pl_addrmap_take((void *)0x2000, &out), 0);
    cr_assert_eq(pl_addrmap_take((void *)0x1000, &out), 1);
    cr_expect_eq(out.bucket, 7);
    cr_expect_eq(out.size, 16);
    cr_expect_eq(out.est_bytes, 32);
    cr_expect_eq(out.time_ns, 1000);
    cr_expect_not(pl_addrmap_maybe((void *)0x1000));
    cr_expect_eq(pl_addrmap_take((void *)0x1000, &out), 0);
    cr_expect_eq(pl_addrmap_count(), 0);
}

Test(addrmap, stale_entry_replaced, .init = setup)
{
    struct pl_live a = entry(0x5000, 1), b = entry(0x5000, 2), stale, out;
    cr_assert_eq(pl_addrmap_insert(&a, &stale), 0);
    cr_assert_eq(pl_addrmap_insert(&b, &stale), 1);
    cr_expect_eq(stale.bucket, 1);
    cr_expect_eq(pl_addrmap_count(), 1);
    cr_assert_eq(pl_addrmap_take((void *)0x5000, &out), 1);
    cr_expect_eq(out.bucket, 2);
}

static void *worker(void *arg)
{
    uintptr_t base = 0x10000000u * ((uintptr_t)arg + 1);
    struct pl_live out, stale;
    for (uintptr_t i = 0; i < PER_THREAD; i++) {
        struct pl_live e = entry(base + i * SPACING, (int32_t)i);
        if (pl_addrmap_insert(&e, &stale) != 0)
            return (void *)1;
    }
    for (uintptr_t i = 0; i < PER_THREAD; i++) {
        uintptr_t p = base + i * SPACING;
        if (!pl_addrmap_maybe((void *)p)) /* must never miss a live entry */
            return (void *)2;
        if (i % 2 && (pl_addrmap_take((void *)p, &out) != 1 || out.bucket != (int32_t)i))
            return (void *)3;
    }
    return NULL;
}

static void count_cb(const struct pl_live *e, void *arg)
{
    (void)e;
    (*(uint64_t *)arg)++;
}

Test(addrmap, eight_threads, .init = setup)
{
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NTHREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        cr_assert_null(r, "thread %d failed with %p", t, r);
    }
    uint64_t n = 0;
    pl_addrmap_foreach(count_cb, &n);
    cr_expect_eq(n, NTHREADS * PER_THREAD / 2);
    cr_expect_eq(pl_addrmap_count(), NTHREADS * PER_THREAD / 2);
    struct pl_live out;
    for (uintptr_t t = 0; t < NTHREADS; t++)
        for (uintptr_t i = 0; i < PER_THREAD; i += 2)
            cr_assert_eq(pl_addrmap_take((void *)(0x10000000u * (t + 1) + i * SPACING), &out), 1);
    cr_expect_eq(pl_addrmap_count(), 0);
    /* every filter bit went back to zero */
    for (uintptr_t t = 0; t < NTHREADS; t++)
        for (uintptr_t i = 0; i < PER_THREAD; i++)
            cr_assert_not(pl_addrmap_maybe((void *)(0x10000000u * (t + 1) + i * SPACING)));
}

Test(addrmap, full_map_drops, .init = setup, .timeout = 60)
{
    struct pl_live stale;
    uint64_t ok = 0, full = 0;
    for (uintptr_t i = 0; i < PL_MAX_LIVE + PL_MAX_LIVE / 4; i++) {
        struct pl_live e = entry(0x100000000ull + i * 32, 0);
        int r = pl_addrmap_insert(&e, &stale);
        if (r == 0)
            ok++;
        else if (r == -ENOSPC)
            full++;
    }
    cr_expect_leq(ok, PL_MAX_LIVE);
    cr_expect_gt(ok, PL_MAX_LIVE / 2);
    cr_expect_gt(full, 0);
    cr_expect_eq(pl_addrmap_count(), ok);
}

/* Blocks of one page share a filter counter (and its stripe). The counter
 * says "maybe" while any of them is live and goes back to 0 with the last
 * one; blocks in the next page do not touch it; past
 * PL_ADDRMAP_FILTER_MAX it sticks, and still never hides a live entry. */
Test(addrmap, shared_and_saturated_filter, .init = setup)
{
    const uintptr_t base = 0x7f0000123000, next_page = base + 4096;
    struct pl_live out, stale;
    cr_assert_eq(pl_addrmap_filter_index(base), pl_addrmap_filter_index(base + 4095));
    cr_assert_eq(pl_addrmap_filter_index(base), pl_addrmap_filter_index(base + ((uintptr_t)1 << 30)));
    cr_assert_neq(pl_addrmap_filter_index(base), pl_addrmap_filter_index(next_page));
    for (uintptr_t i = 0; i < 10; i++) {
        struct pl_live e = entry(base + i * 16, (int32_t)i);
        cr_assert_eq(pl_addrmap_insert(&e, &stale), 0);
    }
    cr_expect_not(pl_addrmap_maybe((void *)next_page), "the next page's counter was touched");
    for (uintptr_t i = 0; i < 10; i++) {
        cr_assert(pl_addrmap_maybe((void *)(base + 9 * 16)), "live entry hidden after %lu takes", (unsigned long)i);
        cr_assert_eq(pl_addrmap_take((void *)(base + i * 16), &out), 1);
    }
    cr_expect_not(pl_addrmap_maybe((void *)base), "the counter did not go back to 0");

    unsigned n = PL_ADDRMAP_FILTER_MAX + 20; /* 8 bytes apart: all in the page */
    for (uintptr_t i = 0; i < n; i++) {
        struct pl_live e = entry(base + i * 8, (int32_t)i);
        cr_assert_eq(pl_addrmap_insert(&e, &stale), 0);
    }
    for (uintptr_t i = 0; i + 1 < n; i++) {
        cr_assert_eq(pl_addrmap_take((void *)(base + i * 8), &out), 1);
        cr_assert(pl_addrmap_maybe((void *)(base + (n - 1) * 8)), "live entry hidden after %lu takes", (unsigned long)i);
    }
    cr_assert_eq(pl_addrmap_take((void *)(base + (n - 1) * 8), &out), 1);
    cr_expect(pl_addrmap_maybe((void *)base), "a saturated counter must stick");
    cr_expect_eq(pl_addrmap_count(), 0);
}

/* The lock-free second look (pl_addrmap_chain_maybe): a free in a page
 * with a live sample mostly finds its chain empty and skips the lock, but
 * a live entry's chain never reads as empty, also while other threads
 * insert and take entries on the same chains. */
#define CHURN_PTRS 4096
static volatile int churn_stop;

static void *churn(void *arg)
{
    uintptr_t base = (uintptr_t)arg;
    struct pl_live out, stale;
    while (!churn_stop)
        for (uintptr_t i = 0; i < CHURN_PTRS; i++) {
            uintptr_t p = base + i * 16;
            if (p % 4096 == 0) /* the live entries' own addresses */
                continue;
            struct pl_live e = entry(p, 3);
            if (pl_addrmap_insert(&e, &stale) != 0 || !pl_addrmap_take((void *)p, &out))
                return (void *)1;
        }
    return NULL;
}

Test(addrmap, chain_second_look, .init = setup, .timeout = 60)
{
    struct pl_live stale, out;
    /* one live block a page; its 255 neighbours of 16 bytes share its counter */
    enum { PAGES = 256 };
    uintptr_t base = 0x30000000u;
    for (uintptr_t pg = 0; pg < PAGES; pg++) {
        struct pl_live e = entry(base + pg * 4096, 1);
        cr_assert_eq(pl_addrmap_insert(&e, &stale), 0);
    }
    unsigned rejected = 0, neighbours = 0;
    for (uintptr_t pg = 0; pg < PAGES; pg++)
        for (uintptr_t off = 16; off < 4096; off += 16, neighbours++) {
            cr_assert(pl_addrmap_maybe((void *)(base + pg * 4096 + off)));
            rejected += !pl_addrmap_chain_maybe((void *)(base + pg * 4096 + off));
        }
    /* 256 consecutive pages fall in 4 stripes of 4096 chains: 64 entries
     * there, so about 1.6% of neighbours share a chain with one */
    cr_expect_gt(rejected, neighbours - neighbours / 20, "%u of %u neighbours rejected", rejected, neighbours);

    /* two threads churn the neighbours of the same pages (same stripes and
     * chains) while the live entries are checked */
    pthread_t th[2];
    churn_stop = 0;
    for (long t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, churn, (void *)(base + 16 + t * CHURN_PTRS * 16));
    for (int round = 0; round < 2000; round++)
        for (uintptr_t pg = 0; pg < PAGES; pg++)
            cr_assert(pl_addrmap_chain_maybe((void *)(base + pg * 4096)), "live entry's chain read as empty");
    churn_stop = 1;
    for (int t = 0; t < 2; t++) {
        void *r;
        pthread_join(th[t], &r);
        cr_assert_null(r);
    }
    for (uintptr_t pg = 0; pg < PAGES; pg++) {
        cr_assert_eq(pl_addrmap_take((void *)(base + pg * 4096), &out), 1);
        cr_expect_not(pl_addrmap_chain_maybe((void *)(base + pg * 4096)));
    }
}

struct seen {
    uintptr_t want[64];
    int n, found[64], other;
};

static void seen_cb(const struct pl_live *e, void *arg)
{
    struct seen *s = arg;
    for (int i = 0; i < s->n; i++)
        if (s->want[i] == e->ptr) {
            s->found[i]++;
            return;
        }
    s->other++;
}

/* The walk reads only the pages of heads that got an entry (a few live
 * samples in a followed child's last snapshot): a handful of entries,
 * spread over stripes and pages, are each met once, and none after a
 * reset. */
Test(addrmap, a_few_entries_each_met_once, .init = setup)
{
    struct seen s = { .n = 40 };
    struct pl_live stale;
    for (int i = 0; i < s.n; i++) {
        s.want[i] = 0x7f0000000000u + (uintptr_t)i * 0x12345670u;
        struct pl_live e = entry(s.want[i], i);
        cr_assert_eq(pl_addrmap_insert(&e, &stale), 0);
    }
    pl_addrmap_foreach(seen_cb, &s);
    for (int i = 0; i < s.n; i++)
        cr_expect_eq(s.found[i], 1, "entry %d met %d times", i, s.found[i]);
    cr_expect_eq(s.other, 0);
    pl_addrmap_reset();
    memset(s.found, 0, sizeof(s.found));
    pl_addrmap_foreach(seen_cb, &s);
    for (int i = 0; i < s.n; i++)
        cr_expect_eq(s.found[i], 0, "entry %d met after the reset", i);
}
