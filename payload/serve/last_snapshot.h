/* last_snapshot.h - the snapshot a process leaves when it ends (issue 28):
 * PID.last next to its socket (common/last_snapshot.h), for a session
 * started with last=1 (`heapinject attach`), whose cli is not there to
 * receive a pushed snapshot.
 *
 * Two ways in: exit() (an on_exit handler registered at the first start:
 * the exiting thread asks the agent and waits, bounded) and a fatal signal
 * (the agent serves fatal.c's event and writes the file then). The file is
 * written by the agent thread only: it owns the snapshot's scratch; or, in
 * a followed child whose agent was to start lazily and never did, by the
 * exiting thread (no agent, no other user of the scratch).
 */
#ifndef HI_PAYLOAD_LAST_SNAPSHOT_H
#define HI_PAYLOAD_LAST_SNAPSHOT_H

#include "common/config.h"

/* How long an exiting thread waits for the agent to write the file: a
 * census in progress holds the agent for seconds, and exit must go on. */
#define PL_LAST_WAIT_MS 3000

/* Start lock: the session's setting and file name (the socket's path with
 * .sock replaced; none if it has no such suffix), this process's pid; the
 * on_exit handler registered once. wake: the agent's wake-up. */
void pl_last_remember(const struct hi_config *cfg, void (*wake)(void));

/* A followed fork child's session (start lock, after pl_last_remember):
 * at exit() it leaves a file only if it has something worth keeping: a
 * sampled allocation, or a life of PL_LAST_CHILD_SEEN_MS (time for a cli
 * to have seen it). Otherwise its exiting thread removes its socket
 * (unlink_socket) and goes on at once: a server forking a short-lived
 * worker per request paid the agent's file write and the wait for it in
 * each one (issue 28: 2.7 ms of CPU per fork with exit(), 0.8 with _exit).
 * samples: how many stacks this session sampled. no_agent (NULL: an agent
 * was started with the session), called once by the exiting thread: 0 an
 * agent serves the session; 1 none does and none will start any more
 * (lazy_agent.h): the exiting thread writes the file itself, and has no
 * socket of its own to remove; 2 none, and no file is wanted. */
#define PL_LAST_CHILD_SEEN_MS 1000
void pl_last_child_session(uint32_t (*samples)(void), void (*unlink_socket)(void), int (*no_agent)(void));

/* fork(): the parent's atfork prepare handler notes the time before the
 * fork; a followed child's pl_last_child_session reads it again. When
 * both fall in one clock tick, that tick is the child's start time as
 * /proc/PID/stat gives it (the kernel takes it between the two), and the
 * file's header needs no read of /proc/self/stat at the end (three calls
 * of every followed backend's end under pgbench -C). Any thread; memory
 * and the vDSO's clock only. */
void pl_last_fork_prepare(void);

/* Tests: the child's start time in clock ticks as pl_last_child_session
 * found it (0: not known, read from /proc at the end). */
uint64_t pl_last_child_start_ticks(void);

/* What the writer does before each file (tests call it): in directory
 * dir, when HI_LAST_MAX_FILES PID.last files or more are there, the
 * oldest (modification time) go until 3/4 of that number are left. */
void pl_last_make_room_in(const char *dir);

/* Agent, at the session's end (no last snapshot): the file kept open
 * since the start (last_keep.h) is closed and removed. */
void pl_last_forget(void);

/* Whether last=1 in this process's session (the fatal handler must wait). */
int pl_last_enabled(void);

/* Agent: an exiting thread waits for its file. Returns 1 and the exit
 * status then (the caller writes the file, removes the socket and calls
 * pl_last_done), else 0. */
int pl_last_exit_pending(int *status);

/* Agent: the exiting thread may go on. */
void pl_last_done(void);

/* Agent: writes PID.last (how, code: common/last_snapshot.h), replacing
 * any. 0 or -errno (nothing is left behind then). */
int pl_last_write(unsigned how, int code);

#endif /* HI_PAYLOAD_LAST_SNAPSHOT_H */
