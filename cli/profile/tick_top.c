/* tick_top.c - the ticks' top risers, named by stack (cli/profile/tick_top.h). */
#include "cli/profile/tick_top.h"

#include <stdlib.h>

bool cli_ticks_have_top(const struct cli_profile *p)
{
    for (size_t i = 0; i < p->nticks; i++)
        if (p->ticks[i].ntop)
            return true;
    return false;
}

int64_t *cli_tick_top_map(const struct cli_profile *p, size_t *n)
{
    uint32_t max = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        if (p->stacks[i].bucket > max)
            max = p->stacks[i].bucket;
    *n = (size_t)max + 1;
    int64_t *map = malloc(*n * sizeof(*map));
    if (!map)
        return NULL;
    for (size_t b = 0; b < *n; b++)
        map[b] = -1;
    for (size_t i = 0; i < p->nstacks; i++)
        if (map[p->stacks[i].bucket] < 0) /* stacks merged into one: the first */
            map[p->stacks[i].bucket] = (int64_t)i;
    return map;
}
