/* seccomp_watch.h - the agent notices a seccomp filter installed after
 * attach and from then on makes only the system calls a cli has shown
 * that filter allows (common/seccomp_gate.h).
 *
 * Agent thread only, except pl_seccomp_sealed() (any thread). */
#ifndef HI_PAYLOAD_SECCOMP_WATCH_H
#define HI_PAYLOAD_SECCOMP_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/seccomp_gate.h"

/* Opens the agent thread's own /proc status (kept open: reading it later
 * needs no openat, which the new filter may forbid) and notes the filters
 * in place now; describe_slots writes the patched slots into the gate
 * (the cli restores them from it), hooks_off is what a seal calls first
 * (the hooks become plain forwards). Called first thing by the agent
 * thread. */
void pl_seccomp_watch_start(void (*describe_slots)(struct hi_seccomp_gate *), void (*hooks_off)(void));

/* Reads the status again (one pread on the kept descriptor). A filter
 * more than at start, or a status that cannot be read as ours any more
 * (the descriptor closed or replaced by the program): seals: the hooks
 * become plain forwards at once (pl_live_key off: no sample, no system
 * call in any hook), and the agent waits, making no system call, until a
 * cli writes its verdict. Returns whether the session is sealed. */
bool pl_seccomp_watch_check(void);

/* Whether every group in `groups` (HI_GATE_*) may be called: always
 * before a seal, only what the verdict allows after. */
bool pl_seccomp_may(uint32_t groups);

/* pl_seccomp_may, after one more look at the status when called on the
 * agent thread (no wait for a verdict: a new filter makes it false): for
 * the calls a request in progress makes (a snapshot's /proc reads and
 * madvise), so that a filter that came during the request is not met
 * by them. */
bool pl_seccomp_recheck(uint32_t groups);

/* Whether a filter came after attach. */
bool pl_seccomp_sealed(void);

/* The agent, sealed and with nothing left to do that the verdict allows:
 * sleeps for good (poll with no timeout) when allowed, else spins without
 * any system call. Never returns. */
__attribute__((noreturn)) void pl_seccomp_park(void);

/* Forgets the watch (the agent leaves: the descriptor is closed when the
 * verdict allows it). */
void pl_seccomp_watch_stop(void);

/* In a fork child whose own session starts (fork_follow.h): drops what the
 * parent's watch held, so the child's agent watches itself. */
void pl_seccomp_watch_atfork_child(void);

#endif /* HI_PAYLOAD_SECCOMP_WATCH_H */
