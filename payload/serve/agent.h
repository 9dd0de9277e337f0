/* agent.h - the agent thread: serves the control socket (common/proto.h).
 *
 * One thread, all signals blocked (the target's signals go to its own
 * threads), never accounted by the hooks. It polls the listening socket and
 * up to PL_AGENT_MAX_CLIENTS connections with short timeouts, pushes TICKs,
 * shifts the growth history every tick, patches newly loaded modules, and
 * detaches on DETACH, on the time-to-live, when the owning connection goes
 * away, or when heapinject_stop() asks it to.
 */
#ifndef HI_PAYLOAD_AGENT_H
#define HI_PAYLOAD_AGENT_H

#include "common/config.h"

#define PL_AGENT_MAX_CLIENTS 8
#define PL_AGENT_STACK_BYTES (1u << 20) /* the agent thread's stack (glibc adds its TCB and static TLS) */
#define PL_AGENT_SEND_TIMEOUT_MS 3000   /* a peer that does not read is dropped */
#define PL_AGENT_PARTIAL_TIMEOUT_MS 5000 /* a message must arrive whole within this */
#define PL_AGENT_MODULE_CHECK_MS 50      /* new-module scan interval */

/* Creates the socket for cfg (start.c, before patching). 0 or -errno. */
int pl_agent_listen(const struct hi_config *cfg);

/* Starts the agent thread. 0 or -errno. On failure the caller calls
 * pl_agent_close(). forked: a followed fork child's, in its atfork
 * handler: what the child inherited that holds for it too is not looked
 * up again (its memory cgroup; no thread but its creator to scan for
 * seccomp filters until the usual 500 ms). */
int pl_agent_start(int forked);

/* Closes and unlinks the socket when the agent never started. */
void pl_agent_close(void);

/* Wakes the agent so it notices the session is stopping. */
void pl_agent_wake(void);

/* An exiting thread of a followed child that leaves no last snapshot
 * (last_snapshot.h): its socket goes now, not at its parent's next sweep.
 * Only the file: the descriptors go with the process. */
void pl_agent_unlink_socket(void);

/* A followed child whose agent starts lazily (lazy_agent.h), before its
 * own pl_agent_listen: whether the socket its parent's agent had at the
 * fork is still that one (lstat: same device and inode). Not: the
 * parent's session ended (detach, ttl), and with it the child's. */
int pl_agent_parent_socket_there(void);

/* Start lock, after pl_agent_listen and before pl_agent_start: the agent
 * detaches as soon as it runs (its session is over; the teardown is its). */
void pl_agent_detach_at_start(void);

/* In a fork child: closes the agent's descriptors (no agent there). */
void pl_agent_atfork_child(void);

#endif /* HI_PAYLOAD_AGENT_H */
