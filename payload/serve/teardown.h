/* teardown.h - the way from running to idle (teardown.c): stop, the undoing
 * of a failed start, and the tables given back once the agent has left. */
#ifndef HI_PAYLOAD_TEARDOWN_H
#define HI_PAYLOAD_TEARDOWN_H

/* Under the start lock: the undoing of a session begun
 * (pl_session_begin) when the setup failed after that (key off, slots
 * restored, state IDLE). */
void pl_session_abort(void);

/* Turns the hooks off and restores every slot. Returns 0, or -ESRCH if no
 * session is running. Safe from the agent thread and from any other; a
 * caller other than the agent then wakes it (pl_agent_wake) so that it
 * closes down. */
int pl_session_stop(void);

/* The agent has closed everything: the tables and our libraries' pages
 * are given back, and a new start may begin. */
void pl_session_agent_exited(void);

/* The tables' pages go back to the kernel (MADV_DONTNEED: they read as
 * empty): at detach, and in a child forked during a session, whose copies
 * would otherwise stay with it, private, once its parent detaches. With
 * keep_rules (a child that is followed), the unwind rules stay: they are
 * its parent's code's, which is its own at the fork, and unwritten they
 * stay pages shared with the parent (cfi_hints.h: cleared, a PostgreSQL
 * backend computed ~55 rules again from the CFI, in fresh pages). */
void pl_session_release_tables(int keep_rules);

/* Slots the last restore could not put back (0 normally). */
int pl_session_unrestored(void);

#endif /* HI_PAYLOAD_TEARDOWN_H */
