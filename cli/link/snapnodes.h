/* snapnodes.h - the stack nodes of one snapshot (common/proto.h,
 * HI_SNAP_WANT_NODES), as the cli receives them: each SNAP_NODES record
 * appends nodes, each stack of a SNAP_STACKS record names one, and its PCs
 * are the path from that node to the root.
 *
 * Everything is checked against the peer being hostile: a record of a
 * length that is no whole number of nodes, a parent not sent before, a
 * chain deeper than HI_MAX_FRAMES, more than CLI_SNAPNODES_MAX nodes, a
 * stack naming a node not sent or of another depth than it says: each is
 * an error with a reason, never a crash or an unbounded allocation. */
#ifndef HI_CLI_LINK_SNAPNODES_H
#define HI_CLI_LINK_SNAPNODES_H

#include <stddef.h>
#include <stdint.h>

/* About twice what an agent can send (payload/stacknodes.h: 3/4 of 2^20
 * slots), as the other bounds of cli/link/client.h. */
#define CLI_SNAPNODES_MAX (1u << 21)

struct cli_snapnodes {
    uint64_t *pc;              /* [id]: id 0 is the root (the empty stack) */
    uint32_t *parent;
    uint8_t *depth;            /* frames from the node to the root */
    size_t n, cap;             /* ids 1..n are nodes */
};

/* Appends the nodes of one SNAP_NODES body. 0; -EPROTO with a reason in
 * why; -ENOMEM. Nothing is appended on error. */
int cli_snapnodes_add(struct cli_snapnodes *t, const uint8_t *body, uint32_t len, char *why, size_t whylen);

/* The PCs of the stack ending at node, innermost first, into a malloc'ed
 * array (*pcs, NULL for no frames) of nframes entries, which must be the
 * node's depth. 0; -EPROTO with why; -ENOMEM. */
int cli_snapnodes_stack(const struct cli_snapnodes *t, uint32_t node, uint32_t nframes, uint64_t **pcs, char *why,
                        size_t whylen);

void cli_snapnodes_free(struct cli_snapnodes *t);

#endif /* HI_CLI_LINK_SNAPNODES_H */
