/* client_ticks.c - the TICKs the agent sends after WATCH, kept in arrival
 * order and copied into a profile's time series. */
#include "cli/link/client.h"

#include "cli/link/client_wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Folds tick b (the newer) into a: b's times and totals (the newest, as
 * a strided chart point takes); the top risers of both, a bucket in both
 * with its rises summed and its newest live bytes, the HI_TICK_TOP most
 * risen kept; b's kept risers (the agent's set is the newer). */
static void fold(struct cli_tick *a, const struct cli_tick *b)
{
    struct cli_tick m = *b;
    for (unsigned k = 0; k < a->ntop && k < HI_TICK_TOP; k++) {
        unsigned at = 0;
        while (at < m.ntop && m.top_bucket[at] != a->top_bucket[k])
            at++;
        if (at < m.ntop) {
            m.top_grew[at] += a->top_grew[k];
            continue;
        }
        /* not in b's: in place of b's least risen when that rose less */
        unsigned least = 0;
        for (unsigned j = 1; j < m.ntop; j++)
            if (m.top_grew[j] < m.top_grew[least])
                least = j;
        if (m.ntop < HI_TICK_TOP)
            least = m.ntop++;
        else if (m.top_grew[least] >= a->top_grew[k])
            continue;
        m.top_bucket[least] = a->top_bucket[k];
        m.top_grew[least] = a->top_grew[k];
        m.top_live[least] = a->top_live[k];
    }
    /* most risen first, as the agent sends them */
    for (unsigned i = 1; i < m.ntop; i++)
        for (unsigned j = i; j > 0 && m.top_grew[j] > m.top_grew[j - 1]; j--) {
            uint32_t tb = m.top_bucket[j];
            int64_t tg = m.top_grew[j];
            uint64_t tl = m.top_live[j];
            m.top_bucket[j] = m.top_bucket[j - 1], m.top_grew[j] = m.top_grew[j - 1], m.top_live[j] = m.top_live[j - 1];
            m.top_bucket[j - 1] = tb, m.top_grew[j - 1] = tg, m.top_live[j - 1] = tl;
        }
    *a = m;
}

/* Appends t; at the cap, each two kept ticks become one first and the
 * ticks to come are grouped twice as many. */
static int keep(struct cli_client *c, const struct cli_tick *t)
{
    if (c->nticks >= CLI_CLIENT_MAX_TICKS) {
        size_t n = 0;
        for (size_t i = 0; i + 1 < c->nticks; i += 2) {
            c->ticks[n] = c->ticks[i];
            fold(&c->ticks[n++], &c->ticks[i + 1]);
        }
        if (c->nticks % 2)
            c->ticks[n++] = c->ticks[c->nticks - 1];
        c->nticks = n;
        c->tick_group = (c->tick_group ? c->tick_group : 1) * 2;
    }
    if (c->nticks == c->cap_ticks) {
        size_t nc = c->cap_ticks ? c->cap_ticks * 2 : 256;
        struct cli_tick *nt = realloc(c->ticks, nc * sizeof(*nt));
        if (!nt)
            return cli_client_fail(c, -ENOMEM, "out of memory");
        c->ticks = nt;
        c->cap_ticks = nc;
    }
    c->ticks[c->nticks++] = *t;
    return 0;
}

int cli_client_store_tick(struct cli_client *c, const struct hi_tick *t, const struct hi_tick_top *top,
                          const struct hi_tick_kept *kept)
{
    c->last_tick = *t;
    c->tick_count++;
    struct cli_tick ct;
    memset(&ct, 0, sizeof(ct));
    ct.t_s = cli_client_since_attach(c, t->now_ns);
    ct.live_bytes = t->totals.est_live_bytes;
    ct.alloc_bytes = t->totals.est_alloc_bytes;
    ct.rss_bytes = t->rss_bytes;
    ct.ntop = top->ntop;
    for (unsigned k = 0; k < top->ntop && k < HI_TICK_TOP; k++) {
        ct.top_bucket[k] = top->top[k].bucket;
        ct.top_grew[k] = top->top[k].grew;
        ct.top_live[k] = top->top[k].live;
    }
    ct.nkept = kept->nkept;
    for (unsigned k = 0; k < kept->nkept && k < HI_TICK_KEPT; k++) {
        ct.kept_bucket[k] = kept->kept[k].bucket;
        ct.kept_live[k] = kept->kept[k].live;
    }
    uint32_t group = c->tick_group ? c->tick_group : 1;
    if (group == 1)
        return keep(c, &ct);
    if (c->npending++)
        fold(&c->pending, &ct);
    else
        c->pending = ct;
    if (c->npending < group)
        return 0;
    c->npending = 0;
    return keep(c, &c->pending);
}

int cli_client_copy_ticks(const struct cli_client *c, struct cli_profile *p)
{
    free(p->ticks);
    p->ticks = NULL;
    p->nticks = 0;
    size_t n = c->nticks + (c->npending ? 1 : 0);
    if (!n)
        return 0;
    if (!(p->ticks = malloc(n * sizeof(*p->ticks))))
        return -ENOMEM;
    if (c->nticks)
        memcpy(p->ticks, c->ticks, c->nticks * sizeof(*p->ticks));
    if (c->npending)
        p->ticks[c->nticks] = c->pending; /* the newest, of a group not yet complete */
    p->nticks = n;
    return 0;
}

double cli_client_since_attach(const struct cli_client *c, uint64_t now_ns)
{
    return now_ns > c->hello.attach_ns ? (double)(now_ns - c->hello.attach_ns) / 1e9 : 0.0;
}
