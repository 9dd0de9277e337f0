/* fatal.h - a last snapshot when the target gets a fatal signal (issue 16).
 *
 * For SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT whose disposition is
 * SIG_DFL when the session starts (never a handler the program or its
 * runtime installed), a handler of ours: it wakes the agent, waits at most
 * PL_FATAL_WAIT_MS for it to have sent a snapshot to the cli, puts SIG_DFL
 * back and lets the signal kill the process as it would have (a fault is
 * re-executed and faults again; a sent signal is sent again, with its
 * siginfo). SIGTERM is left alone: it is how a service is stopped, not a
 * crash (docs/DESIGN-NOTES.md "A snapshot at a crash").
 *
 * It does not wait when the thread is the agent, when it is inside the
 * payload (it may hold a table lock the snapshot needs), when nobody would
 * receive the snapshot, or when another thread is already in the handler.
 */
#ifndef HI_PAYLOAD_FATAL_H
#define HI_PAYLOAD_FATAL_H

#include <stdint.h>

#define PL_FATAL_WAIT_MS 1000

/* What the waiting thread got. */
struct pl_fatal_event {
    int32_t signo, si_code, tid;
};

/* Start lock: installs the handler for each fatal signal that is SIG_DFL
 * now; the handler calls wake_agent (async-signal-safe) to have the agent
 * send the last snapshot. Returns how many were installed. */
int pl_fatal_install(void (*wake_agent)(void));

/* Puts SIG_DFL back for every signal whose handler is still ours (detach,
 * start lock). Signals the program took over since are left to it. */
void pl_fatal_uninstall(void);

/* Signals handled by us now, as a mask of 1 << signo (tests, status). */
uint64_t pl_fatal_installed(void);

/* Agent thread: whether a cli would receive a snapshot now. A dying thread
 * waits only when one would. */
void pl_fatal_set_receiver(int yes);

/* Agent thread: 1 with *ev filled when a dying thread waits for its
 * snapshot, else 0. */
int pl_fatal_pending(struct pl_fatal_event *ev);

/* Agent thread: the snapshot was sent (or could not be): the dying thread
 * goes on dying. */
void pl_fatal_done(void);

#endif /* HI_PAYLOAD_FATAL_H */
