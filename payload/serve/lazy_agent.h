/* lazy_agent.h - a followed fork child's agent thread started once the
 * child has lived a while, not at its fork (config follow=2, issue 28).
 *
 * A PostgreSQL backend per connection (`pgbench -C`) lives a few ms; the
 * agent thread made in its fork handler, and the last snapshot that
 * thread wrote at its exit, were ~10% of the server's CPU (DESIGN-NOTES,
 * session 21). Lazily, the child's session starts at the fork as before
 * (hooks live, its own tables), without socket or thread; the first
 * sample taken PL_LAZY_AGENT_MS or more after the fork, on a program
 * thread with none of the loader's locks held, makes both (socket, then
 * thread: a socket always has a thread to answer it, so a cli never waits
 * on one that nobody serves). A child that exits before leaves its last
 * snapshot from the exiting thread (last_snapshot.c), without the wait
 * for an agent. Not followed until then: it has no socket, so a cli sees
 * no session in it (`snapshot -p CHILD` says it is not attached; the
 * tree session takes its PID.last when it ends). */
#ifndef HI_PAYLOAD_LAZY_AGENT_H
#define HI_PAYLOAD_LAZY_AGENT_H

#include "common/config.h"

#define PL_LAZY_AGENT_MS HI_LAZY_AGENT_MS /* a child's life before its agent starts (the cli says it) */

/* start_in_child (start lock, the child's only thread): its session has
 * no agent yet; cfg is the one pl_agent_listen will get. Arms the
 * sampled path's check (interpose.h, pl_after_sample). */
void pl_lazy_agent_arm(const struct hi_config *cfg);

/* In every fork child, before anything else of the session: an armed
 * state copied from a pending parent is not this process's. Memory only. */
void pl_lazy_agent_atfork_child(void);

/* The thread that runs the exit handler, once: what becomes of the last
 * snapshot. No agent runs and none will start any more (claimed now, or
 * its start failed): PL_LAZY_EXIT_WRITE, the caller writes it itself, or
 * PL_LAZY_EXIT_NONE when the parent's session has ended meanwhile (its
 * socket gone: a detach did not know this child). PL_LAZY_EXIT_AGENT (0):
 * an agent serves the session, or none was lazy. */
enum { PL_LAZY_EXIT_AGENT = 0, PL_LAZY_EXIT_WRITE = 1, PL_LAZY_EXIT_NONE = 2 };
int pl_lazy_agent_claim_exit(void);

/* Whether this process's session waits for its lazy agent (status, tests). */
int pl_lazy_agent_pending(void);

#endif /* HI_PAYLOAD_LAZY_AGENT_H */
