/* merge_ticks.c - the ticks of several profiles as one timeline
 * (merge_ticks.h). */
#include "cli/profile/merge_ticks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct at {
    double t_s;   /* on the merged clock */
    size_t src;   /* the profile */
    size_t i;     /* its tick */
};

static int by_time(const void *a, const void *b)
{
    const struct at *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Whether profile p's process exited (its ticks end there). */
static bool exited(const struct cli_profile *p)
{
    for (size_t k = 0; k < p->nprocesses; k++)
        if (p->processes[k].have_exit)
            return true;
    return false;
}

int cli_ticks_merge(const struct cli_profile *in, size_t n, const bool *drop, uint64_t attach_ns,
                    struct cli_tick **out, size_t *nout)
{
    size_t total = 0;
    *out = NULL;
    *nout = 0;
    for (size_t s = 0; s < n; s++)
        if (!(drop && drop[s]))
            total += in[s].nticks;
    if (!total)
        return 0;
    struct at *all = malloc(total * sizeof(*all));
    struct cli_tick *m = calloc(total, sizeof(*m));
    const struct cli_tick **last = calloc(n, sizeof(*last));
    size_t *seen = calloc(n, sizeof(*seen));
    if (!all || !m || !last || !seen) {
        free(all), free(m), free(last), free(seen);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t s = 0; s < n; s++) {
        if (drop && drop[s])
            continue;
        double shift = 0;
        if (attach_ns && in[s].attach_ns)
            shift = ((double)in[s].attach_ns - (double)attach_ns) / 1e9;
        for (size_t i = 0; i < in[s].nticks; i++)
            all[k++] = (struct at){ in[s].ticks[i].t_s + shift, s, i };
    }
    qsort(all, total, sizeof(*all), by_time);
    struct cli_tick sum = { 0 }; /* of each profile's newest tick so far */
    for (size_t j = 0; j < total; j++) {
        size_t s = all[j].src;
        const struct cli_profile *p = &in[s];
        const struct cli_tick *t = &p->ticks[all[j].i];
        if (last[s]) {
            sum.live_bytes -= last[s]->live_bytes;
            sum.alloc_bytes -= last[s]->alloc_bytes;
            sum.rss_bytes -= last[s]->rss_bytes;
        }
        sum.live_bytes += t->live_bytes;
        sum.alloc_bytes += t->alloc_bytes;
        sum.rss_bytes += t->rss_bytes;
        last[s] = t;
        struct cli_tick *d = &m[j];
        *d = *t; /* its own top risers */
        d->t_s = all[j].t_s;
        d->pid = t->pid ? t->pid : p->pid;
        d->live_bytes = sum.live_bytes;
        d->alloc_bytes = sum.alloc_bytes;
        d->rss_bytes = sum.rss_bytes;
        if (++seen[s] == p->nticks && exited(p)) { /* gone: its memory with it */
            sum.live_bytes -= t->live_bytes;
            sum.alloc_bytes -= t->alloc_bytes;
            sum.rss_bytes -= t->rss_bytes;
            last[s] = NULL;
        }
    }
    free(all), free(last), free(seen);
    *out = m;
    *nout = total;
    return 0;
}
