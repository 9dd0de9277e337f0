/* tick_top.c - the ticks' top risers, named by stack (cli/profile/tick_top.h). */
#include "cli/profile/tick_top.h"

#include <errno.h>
#include <stdlib.h>

struct cli_tick_top_key {
    int32_t pid;
    uint32_t bucket;
    size_t stack;
};

bool cli_ticks_have_top(const struct cli_profile *p)
{
    for (size_t i = 0; i < p->nticks; i++)
        if (p->ticks[i].ntop)
            return true;
    return false;
}

static int cmp_key(const void *a, const void *b)
{
    const struct cli_tick_top_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int cli_tick_top_index_init(struct cli_tick_top_index *ix, const struct cli_profile *p)
{
    ix->n = p->nstacks;
    ix->self = p->pid;
    if (!(ix->keys = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*ix->keys))))
        return -ENOMEM;
    for (size_t i = 0; i < p->nstacks; i++)
        ix->keys[i] = (struct cli_tick_top_key){ p->stacks[i].pid ? p->stacks[i].pid : p->pid, p->stacks[i].bucket, i };
    qsort(ix->keys, ix->n, sizeof(*ix->keys), cmp_key);
    return 0;
}

void cli_tick_top_index_free(struct cli_tick_top_index *ix)
{
    free(ix->keys);
    ix->keys = NULL;
    ix->n = 0;
}

/* The first stack of pid with that bucket; -1 if none. */
static int64_t find(const struct cli_tick_top_index *ix, int32_t pid, uint32_t bucket)
{
    struct cli_tick_top_key want = { pid ? pid : ix->self, bucket, 0 };
    /* the first key not below (pid, bucket, 0): the lowest stack index */
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&ix->keys[mid], &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ix->n && ix->keys[lo].pid == want.pid && ix->keys[lo].bucket == want.bucket)
        return (int64_t)ix->keys[lo].stack;
    return -1;
}

int64_t cli_tick_top_stack(const struct cli_tick_top_index *ix, const struct cli_tick *t, unsigned k)
{
    return k < t->ntop && k < HI_TICK_TOP ? find(ix, t->pid, t->top_bucket[k]) : -1;
}

int64_t cli_tick_kept_stack(const struct cli_tick_top_index *ix, const struct cli_tick *t, unsigned k)
{
    return k < t->nkept && k < HI_TICK_KEPT ? find(ix, t->pid, t->kept_bucket[k]) : -1;
}
