/* client_ticks.c - the TICKs the agent sends after WATCH, kept in arrival
 * order and copied into a profile's time series. */
#include "cli/link/client.h"

#include "cli/link/client_wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_client_store_tick(struct cli_client *c, const struct hi_tick *t, const struct hi_tick_top *top,
                          const struct hi_tick_kept *kept)
{
    c->last_tick = *t;
    c->tick_count++;
    if (c->nticks >= CLI_CLIENT_MAX_TICKS)
        return 0; /* a week of ticks: keep the newest totals only */
    if (c->nticks == c->cap_ticks) {
        size_t nc = c->cap_ticks ? c->cap_ticks * 2 : 256;
        struct cli_tick *nt = realloc(c->ticks, nc * sizeof(*nt));
        if (!nt)
            return cli_client_fail(c, -ENOMEM, "out of memory");
        c->ticks = nt;
        c->cap_ticks = nc;
    }
    struct cli_tick *ct = &c->ticks[c->nticks++];
    ct->t_s = cli_client_since_attach(c, t->now_ns);
    ct->live_bytes = t->totals.est_live_bytes;
    ct->alloc_bytes = t->totals.est_alloc_bytes;
    ct->rss_bytes = t->rss_bytes;
    ct->ntop = top->ntop;
    for (unsigned k = 0; k < HI_TICK_TOP; k++) {
        ct->top_bucket[k] = k < top->ntop ? top->top[k].bucket : 0;
        ct->top_grew[k] = k < top->ntop ? top->top[k].grew : 0;
        ct->top_live[k] = k < top->ntop ? top->top[k].live : 0;
    }
    ct->pid = 0;
    ct->nkept = kept->nkept;
    for (unsigned k = 0; k < HI_TICK_KEPT; k++) {
        ct->kept_bucket[k] = k < kept->nkept ? kept->kept[k].bucket : 0;
        ct->kept_live[k] = k < kept->nkept ? kept->kept[k].live : 0;
    }
    return 0;
}

int cli_client_copy_ticks(const struct cli_client *c, struct cli_profile *p)
{
    free(p->ticks);
    p->ticks = NULL;
    p->nticks = 0;
    if (!c->nticks)
        return 0;
    if (!(p->ticks = malloc(c->nticks * sizeof(*p->ticks))))
        return -ENOMEM;
    memcpy(p->ticks, c->ticks, c->nticks * sizeof(*p->ticks));
    p->nticks = c->nticks;
    return 0;
}

double cli_client_since_attach(const struct cli_client *c, uint64_t now_ns)
{
    return now_ns > c->hello.attach_ns ? (double)(now_ns - c->hello.attach_ns) / 1e9 : 0.0;
}
