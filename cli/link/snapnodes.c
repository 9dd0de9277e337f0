/* snapnodes.c - stack nodes received from the agent (snapnodes.h). */
#include "cli/link/snapnodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"

static int grow(struct cli_snapnodes *t, size_t want)
{
    if (want <= t->cap)
        return 0;
    size_t nc = t->cap ? t->cap : 4096;
    while (nc < want)
        nc *= 2;
    uint64_t *pc = realloc(t->pc, nc * sizeof(*pc));
    if (pc)
        t->pc = pc;
    uint32_t *parent = realloc(t->parent, nc * sizeof(*parent));
    if (parent)
        t->parent = parent;
    uint8_t *depth = realloc(t->depth, nc * sizeof(*depth));
    if (depth)
        t->depth = depth;
    if (!pc || !parent || !depth)
        return -ENOMEM;
    if (t->cap == 0) { /* the root */
        t->pc[0] = 0;
        t->parent[0] = 0;
        t->depth[0] = 0;
    }
    t->cap = nc;
    return 0;
}

int cli_snapnodes_add(struct cli_snapnodes *t, const uint8_t *body, uint32_t len, char *why, size_t whylen)
{
    const size_t size = sizeof(struct hi_snap_node);
    if (len == 0 || len % size) {
        snprintf(why, whylen, "malformed SNAP_NODES message from the agent (%u bytes, not a whole number of %zu-byte nodes)",
                 len, size);
        return -EPROTO;
    }
    size_t count = len / size;
    if (t->n + count > CLI_SNAPNODES_MAX) {
        snprintf(why, whylen, "the agent sent more than %u stack nodes, the bound", CLI_SNAPNODES_MAX);
        return -EPROTO;
    }
    if (grow(t, t->n + count + 1) < 0) {
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        struct hi_snap_node nd;
        memcpy(&nd, body + i * size, size);
        size_t id = t->n + 1 + i;
        if (nd.parent >= id) {
            snprintf(why, whylen, "stack node %zu from the agent names parent %u, not sent before it", id, nd.parent);
            return -EPROTO; /* t->n unchanged: the nodes written above are not taken */
        }
        if (t->depth[nd.parent] >= HI_MAX_FRAMES) {
            snprintf(why, whylen, "stack node %zu from the agent is deeper than %u frames", id, HI_MAX_FRAMES);
            return -EPROTO;
        }
        t->pc[id] = nd.pc;
        t->parent[id] = nd.parent;
        t->depth[id] = (uint8_t)(t->depth[nd.parent] + 1);
    }
    t->n += count;
    return 0;
}

int cli_snapnodes_stack(const struct cli_snapnodes *t, uint32_t node, uint32_t nframes, uint64_t **pcs, char *why,
                        size_t whylen)
{
    *pcs = NULL;
    if (node > t->n) {
        snprintf(why, whylen, "a stack from the agent names node %u, not sent (%zu sent)", node, t->n);
        return -EPROTO;
    }
    uint32_t depth = node ? t->depth[node] : 0;
    if (depth != nframes) {
        snprintf(why, whylen, "a stack from the agent says %u frames, its node %u has %u", nframes, node, depth);
        return -EPROTO;
    }
    if (!nframes)
        return 0;
    uint64_t *out = malloc(nframes * sizeof(*out));
    if (!out) {
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    uint32_t k = 0;
    for (uint32_t id = node; id && k < nframes; id = t->parent[id])
        out[k++] = t->pc[id];
    *pcs = out;
    return 0;
}

void cli_snapnodes_free(struct cli_snapnodes *t)
{
    free(t->pc);
    free(t->parent);
    free(t->depth);
    memset(t, 0, sizeof(*t));
}
