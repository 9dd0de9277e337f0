/* u64map.c - a uint64 -> uint64 map on the cli's one hash table. */
#include "cli/util/u64map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_u64map_get(const struct cli_u64map *m, uint64_t key, uint64_t *val)
{
    long e = cli_hindex_find(&m->index, key, NULL, NULL);
    if (e < 0)
        return -ENOENT;
    *val = m->vals[e];
    return 0;
}

int cli_u64map_put(struct cli_u64map *m, uint64_t key, uint64_t val)
{
    long e = cli_hindex_find(&m->index, key, NULL, NULL);
    if (e >= 0) {
        m->vals[e] = val;
        return 0;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        uint64_t *nv = realloc(m->vals, nc * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        m->vals = nv;
        m->cap = nc;
    }
    if (cli_hindex_add(&m->index, key, m->n) < 0)
        return -ENOMEM;
    m->vals[m->n++] = val;
    return 0;
}

void cli_u64map_free(struct cli_u64map *m)
{
    free(m->vals);
    cli_hindex_free(&m->index);
    memset(m, 0, sizeof(*m));
}
