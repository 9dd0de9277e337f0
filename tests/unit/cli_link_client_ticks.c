/* Unit tests for cli/link/client_ticks.c: the ticks a session keeps, in
 * bounded memory however long it runs (issue 30). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/link/client.h"
#include "cli/link/client_wire.h"

/* Tick i at (i + 1) * 0.5 s; its top: bucket i % nb rose 1 byte (live i). */
static void store(struct cli_client *c, uint64_t i, unsigned nb)
{
    struct hi_tick t;
    struct hi_tick_top top;
    struct hi_tick_kept kept;
    memset(&t, 0, sizeof(t));
    memset(&top, 0, sizeof(top));
    memset(&kept, 0, sizeof(kept));
    t.now_ns = (i + 1) * 500000000ull;
    t.totals.est_live_bytes = i;
    top.ntop = 1;
    top.top[0] = (struct hi_tick_top_entry){ (uint32_t)(i % nb), 0, 1, i };
    kept.nkept = 1;
    kept.kept[0] = (struct hi_tick_kept_entry){ (uint32_t)(i % nb), 0, i };
    cr_assert_eq(cli_client_store_tick(c, &t, &top, &kept), 0);
}

/* Three times the cap and a few: never more than the cap kept; the
 * newest tick last (its totals, from a group not yet complete); times in
 * order; every byte risen still counted (3 buckets: none left out). */
Test(cli_link_client_ticks, grouped_past_the_cap)
{
    struct cli_client c;
    cli_client_init(&c);
    uint64_t n = 3ull * CLI_CLIENT_MAX_TICKS + 5;
    for (uint64_t i = 0; i < n; i++) {
        store(&c, i, 3);
        cr_assert(c.nticks <= CLI_CLIENT_MAX_TICKS, "%zu ticks kept at tick %lu", c.nticks, (unsigned long)i);
    }
    cr_expect_eq(c.tick_group, 4, "group %u", c.tick_group);
    struct cli_profile p;
    memset(&p, 0, sizeof(p));
    cr_assert_eq(cli_client_copy_ticks(&c, &p), 0);
    cr_assert(p.nticks > CLI_CLIENT_MAX_TICKS / 2 && p.nticks <= CLI_CLIENT_MAX_TICKS + 1, "%zu", p.nticks);
    cr_expect_eq(p.ticks[p.nticks - 1].live_bytes, n - 1, "the newest tick's totals");
    cr_expect_float_eq(p.ticks[p.nticks - 1].t_s, 0.5 * (double)n, 1e-6);
    int64_t grew = 0;
    for (size_t i = 0; i < p.nticks; i++) {
        if (i)
            cr_assert(p.ticks[i].t_s > p.ticks[i - 1].t_s, "tick %zu out of order", i);
        for (unsigned k = 0; k < p.ticks[i].ntop; k++)
            grew += p.ticks[i].top_grew[k];
    }
    cr_expect_eq(grew, (int64_t)n, "risen %ld of %lu", (long)grew, (unsigned long)n);
    free(p.ticks);
    cli_client_close(&c);
}

/* A grouped tick keeps the HI_TICK_TOP most risen of its ticks' risers,
 * most first: 6 buckets, each rising once in the group, bucket k by k+1. */
Test(cli_link_client_ticks, group_keeps_the_most_risen)
{
    struct cli_client c;
    cli_client_init(&c);
    c.tick_group = 8; /* as after three halvings */
    struct hi_tick t;
    struct hi_tick_top top;
    struct hi_tick_kept kept;
    memset(&t, 0, sizeof(t));
    memset(&kept, 0, sizeof(kept));
    for (unsigned i = 0; i < 8; i++) {
        memset(&top, 0, sizeof(top));
        t.now_ns = (i + 1) * 500000000ull;
        if (i < 6) {
            top.ntop = 1;
            top.top[0] = (struct hi_tick_top_entry){ i, 0, (int64_t)i + 1, 100 * (uint64_t)i };
        }
        cr_assert_eq(cli_client_store_tick(&c, &t, &top, &kept), 0);
    }
    cr_assert_eq(c.nticks, 1);
    const struct cli_tick *g = &c.ticks[0];
    cr_assert_eq(g->ntop, HI_TICK_TOP);
    for (unsigned k = 0; k < HI_TICK_TOP; k++) {
        cr_expect_eq(g->top_bucket[k], 5 - k, "top %u: bucket %u", k, g->top_bucket[k]);
        cr_expect_eq(g->top_grew[k], 6 - (int64_t)k);
    }
    cli_client_close(&c);
}
