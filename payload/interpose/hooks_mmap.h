/* hooks_mmap.h - the direct mmap family's exact counters (issue 14).
 *
 * The hooks themselves are reached through pl_hook_map_addr (family.h).
 * These counts are global atomics, not per-thread counters like malloc's:
 * every one of these calls is a system call already, an atomic add is
 * nothing next to it.
 */
#ifndef HI_PAYLOAD_HOOKS_MMAP_H
#define HI_PAYLOAD_HOOKS_MMAP_H

#include "common/proto.h"

/* The counts since the session started, with the table's figures. */
void pl_hooks_mmap_counts(struct hi_snap_mmap *out);

/* New session: counts back to 0. */
void pl_hooks_mmap_reset(void);

#endif /* HI_PAYLOAD_HOOKS_MMAP_H */
