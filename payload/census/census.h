/* census.h - a census of the heap as it is (CENSUS_REQ), taken in a
 * copy-on-write child of the process so that the process runs on.
 *
 * The agent thread forks the process with a raw clone (no CLONE_VM; a
 * child of the program's parent, CLONE_PARENT, so that no wait() of the
 * program sees it; see census.c), the child walks and marks its frozen
 * copy (heap.c, mark.c) and writes the answer into a shared
 * mapping, the agent follows it through a pidfd and sends the records. The
 * program's threads are held only while the kernel copies the page tables
 * (the fork takes the memory map's lock for writing): that time is the
 * stall, measured and reported. Agent thread only. */
#ifndef HI_PAYLOAD_CENSUS_H
#define HI_PAYLOAD_CENSUS_H

#include <stddef.h>

#include "common/proto.h"
#include "payload/sys/sys.h"

/* CENSUS_PREP: readies a census (everything that may take a lock; with
 * glibc's layout from libc's debug information when the cli sent it) and
 * answers READY with the agent's tid, or END when no census can be taken.
 * agent_stack_bytes: the size of the calling (agent) thread's stack, left
 * out of the roots. 0, or -errno when a send failed. */
int pl_census_prepare_send(pl_send_fn send, void *ctx, const struct hi_census_layout *layout,
                           size_t agent_stack_bytes);

/* CENSUS_REGS: one stopped thread's registers, for the prepared census. */
void pl_census_add_regs(const struct hi_census_regs *r);

/* CENSUS_REQ: takes the census (prepared, or prepared now), sends FORKED
 * when registers came (the cli then lets its threads go), then GROUPs,
 * ROOTs and END. peer_fd is the cli's connection: when it closes, the
 * copy is killed at once. 0, or -errno when a send failed (the connection
 * is then dropped). */
int pl_census_send(pl_send_fn send, void *ctx, int peer_fd, size_t agent_stack_bytes);

/* Drops a prepared census that no REQ followed (a cli gone). */
void pl_census_forget(void);

#endif /* HI_PAYLOAD_CENSUS_H */
