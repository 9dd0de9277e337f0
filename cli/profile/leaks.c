/* leaks.c - rankings of live blocks by age and of growing stacks. */
#include "cli/profile/leaks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_profile *sort_profile; /* qsort has no context */

static int cmp_leak(const void *a, const void *b)
{
    const struct cli_stack *x = &sort_profile->stacks[((const struct cli_leak *)a)->stack];
    const struct cli_stack *y = &sort_profile->stacks[((const struct cli_leak *)b)->stack];
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    size_t i = ((const struct cli_leak *)a)->stack, j = ((const struct cli_leak *)b)->stack;
    return i < j ? -1 : i > j;
}

int cli_leaks_rank(const struct cli_profile *p, struct cli_leak **out, size_t *n)
{
    size_t cnt = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        cnt += p->stacks[i].raw_live_objects > 0;
    if (!cnt)
        return 0;
    struct cli_leak *v = calloc(cnt, sizeof(*v));
    if (!v)
        return -ENOMEM;
    cnt = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        if (!s->raw_live_objects)
            continue;
        v[cnt].stack = i;
        if (s->oldest_live_ns && p->snapshot_ns > s->oldest_live_ns)
            v[cnt].oldest_age_s = (double)(p->snapshot_ns - s->oldest_live_ns) / 1e9;
        v[cnt].mean_age_s = (double)s->live_age_sum_ms / 1000.0 / (double)s->raw_live_objects;
        cnt++;
    }
    sort_profile = p;
    qsort(v, cnt, sizeof(*v), cmp_leak);
    *out = v;
    *n = cnt;
    return 0;
}

static int cmp_growth(const void *a, const void *b)
{
    const struct cli_growth *x = a, *y = b;
    if (x->per_s != y->per_s)
        return x->per_s > y->per_s ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Fills g from a stack's growth history; false when it did not grow steadily. */
static bool steady_growth(const struct cli_stack *s, uint32_t tick_ms, struct cli_growth *g)
{
    double pts[HI_GROWTH_POINTS];
    unsigned n = 0, ups = 0;
    double down = 0;
    for (unsigned i = 0; i < HI_GROWTH_POINTS; i++)
        if (s->growth[i] >= 0)
            pts[n++] = (double)s->growth[i];
    if (n < 3 || pts[n - 1] <= pts[0])
        return false;
    for (unsigned i = 1; i < n; i++) {
        if (pts[i] > pts[i - 1])
            ups++;
        else if (pts[i] < pts[i - 1])
            down += pts[i - 1] - pts[i];
    }
    double rise = pts[n - 1] - pts[0];
    if (ups * 2 < n - 1 || down > rise / 10)
        return false;
    /* Least squares over x = 0..n-1. */
    double mx = (n - 1) / 2.0, my = 0, sxy = 0, sxx = 0;
    for (unsigned i = 0; i < n; i++)
        my += pts[i];
    my /= n;
    for (unsigned i = 0; i < n; i++) {
        sxy += (i - mx) * (pts[i] - my);
        sxx += (i - mx) * (i - mx);
    }
    double slope = sxx > 0 ? sxy / sxx : 0;
    g->points = n;
    g->first = pts[0];
    g->last = pts[n - 1];
    g->per_s = tick_ms ? slope * 1000.0 / tick_ms : slope;
    return slope > 0;
}

int cli_leaks_growing_rank(const struct cli_profile *p, struct cli_growth **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!p->nstacks)
        return 0;
    struct cli_growth *v = calloc(p->nstacks, sizeof(*v));
    size_t cnt = 0;
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < p->nstacks; i++) {
        if (steady_growth(&p->stacks[i], p->tick_ms, &v[cnt])) {
            v[cnt].stack = i;
            cnt++;
        }
    }
    if (!cnt) {
        free(v);
        return 0;
    }
    qsort(v, cnt, sizeof(*v), cmp_growth);
    *out = v;
    *n = cnt;
    return 0;
}

int cli_leaks_views(const struct cli_profile *p, struct cli_leak_views *v)
{
    memset(v, 0, sizeof(*v));
    if (cli_leaks_rank(p, &v->leaks, &v->nleaks) < 0)
        return -ENOMEM;
    if (cli_leaks_growing_rank(p, &v->growing, &v->ngrowing) < 0) {
        cli_leaks_views_free(v);
        return -ENOMEM;
    }
    return 0;
}

void cli_leaks_views_free(struct cli_leak_views *v)
{
    free(v->leaks);
    free(v->growing);
    memset(v, 0, sizeof(*v));
}
