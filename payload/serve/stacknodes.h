/* stacknodes.h - the agent's stack nodes: stacks that share their outer
 * frames are sent as a tree (common/proto.h, HI_SNAP_WANT_NODES).
 *
 * One hash table from (parent node, pc) to node id, mapped once from the
 * arena (MAP_NORESERVE: pages cost nothing until a snapshot touches them)
 * and cleared after each snapshot, so node ids count from 1 per snapshot.
 * Agent thread only; no allocation, bounded: past 3/4 of its slots the
 * table refuses new nodes and the caller sends that stack as a
 * SNAP_BUCKET. */
#ifndef HI_PAYLOAD_STACKNODES_H
#define HI_PAYLOAD_STACKNODES_H

#include <stddef.h>
#include <stdint.h>

#define PL_STACKNODES_SLOTS (1u << 20) /* 16 MiB of address space */
#define PL_STACKNODES_MAX_DEPTH 128u   /* HI_MAX_FRAMES: deeper stacks are -ENOSPC */

/* A new node, to send before any stack that names it. 0 or -errno (the
 * snapshot stops). */
typedef int (*pl_stacknodes_emit)(void *ctx, uint32_t id, uint32_t parent, uint64_t pc);

/* Maps the table once. 0 or -ENOMEM. */
int pl_stacknodes_init(void);

/* Starts a snapshot of about `frames` frames in all: the table uses the
 * smallest power of two of slots >= 2 * frames (at least 4096, at most
 * PL_STACKNODES_SLOTS). */
void pl_stacknodes_begin(uint64_t frames);

/* The node of the stack pcs[0..n) (innermost first) into *node, emitting
 * the nodes not seen before (outermost first). 0; -ENOSPC when the table
 * is full (nodes emitted so far stay valid) or the stack deeper than
 * PL_STACKNODES_MAX_DEPTH; the emit's error. */
int pl_stacknodes_path(const uintptr_t *pcs, uint32_t n, uint32_t *node, pl_stacknodes_emit emit, void *ctx);

/* Nodes made since pl_stacknodes_begin. */
uint32_t pl_stacknodes_count(void);

/* Gives the touched pages back (end of a snapshot, end of the session). */
void pl_stacknodes_end(void);

#endif /* HI_PAYLOAD_STACKNODES_H */
