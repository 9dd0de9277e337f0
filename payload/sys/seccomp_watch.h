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
#include "common/seccomp_gate_calls.h"

/* Opens the agent thread's own /proc status (pl_proc_own_open: call
 * pl_proc_own_start first; kept open: reading it later
 * needs no openat, which the new filter may forbid) and notes the filters
 * in place now; makes the userfaultfd a sealed agent sleeps on when no
 * filter is there yet or uffd_allowed (the injector ran the filters in
 * force over its calls: common/config.h "uffd"); groups_at_start: the
 * HI_GATE_* groups the filters in force allow (config "gate"; -1 not
 * known; with no filter, all); describe_slots writes the patched slots into the gate
 * (the cli restores them from it), hooks_off is what a seal calls first
 * (the hooks become plain forwards). forked: a followed fork child's
 * agent, whose only other thread made it (same filters): the first scan
 * of the other threads comes after the usual gap, not at once. Called
 * first thing by the agent thread. */
void pl_seccomp_watch_start(void (*describe_slots)(struct hi_seccomp_gate *), void (*hooks_off)(void),
                            bool uffd_allowed, int64_t groups_at_start, bool forked);

/* Reads the status again (one pread on the kept descriptor), and every
 * other thread's now and then (every 500 ms, less often when a scan
 * costs more: 1/50 of the agent's time at most). A thread with a filter count other than the agent's had at
 * start: the hooks go off for good, the agent serves on (its own filters
 * are the ones the attach checked). Not before each request: a scan of
 * 5,000 threads before each of a census's 5,000 register messages held
 * them 100 s; the cli scans before each command instead. A filter
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

/* Whether the hooks must stay off: sealed, or a thread got filters of its
 * own after attach (hi_seccomp_gate.odd_tid), or is installing one
 * (sandbox_tid). Any thread. */
bool pl_seccomp_hooks_barred(void);

/* Thread tid of process pid is about to install a seccomp filter through
 * a slot of ours (interpose/hooks_sandbox.c): the hooks stay off for good
 * (the caller turns them off, pl_session_seal_hooks). Any thread; memory
 * only. */
void pl_seccomp_note_sandbox(int tid, int pid);

/* A new session (start lock): a sandbox_tid of another process (copied
 * into a fork child with its memory) bars nothing here. */
void pl_seccomp_forget_foreign(void);

/* Thread tid's filter of its own (no TSYNC) went in: filters is its
 * count now (-1: unknown). Memory only: called under that filter. */
void pl_seccomp_note_own_filter(int tid, int filters);

/* The agent, sealed and with nothing left to do that the verdict allows:
 * sleeps for good in the first of poll with no timeout, a futex wait,
 * pause(2) that the verdict allows, else in a fault on its userfaultfd,
 * else (none of them) spins without any system call. Never returns. */
__attribute__((noreturn)) void pl_seccomp_park(void);

/* A TSYNC filter installed through a slot of ours reaches the agent's
 * thread too, and the agent's own look at its status (each round, before
 * each request) leaves a moment between the look and the system calls
 * after it (a tick's /proc read): a filter that lands there kills the
 * process. So the installing thread holds the agent out of all it does
 * until its call has returned. Each side stores its flag, then reads the
 * other's (sequentially consistent): either the agent sees the hold and
 * waits, or the installer sees the agent busy and waits for it to finish
 * its round and go back to its poll.
 *
 * Agent thread: pl_seccomp_agent_busy(true) when it wakes, (false) before
 * it blocks in its poll. While a hold is on, the agent spins (no system
 * call: the filter may be in by now) for at most 200 ms. */
void pl_seccomp_agent_busy(bool busy);

/* Installing thread, before its call (no filter of it yet): holds the
 * agent, waiting at most max_ns for a round in progress to end. Returns
 * whether the agent was seen idle (false: the wait ran out, the agent
 * still in a round). */
bool pl_seccomp_hold_agent(uint64_t max_ns);

/* Installing thread, after its TSYNC call went in and before the
 * release (the agent is held): the verdict on the new filter, written
 * as a cli would, so the agent sleeps or serves within it at once instead
 * of waiting (spinning, without a userfaultfd) until a cli comes.
 * filters_before: the installer's Seccomp_filters before its call;
 * groups_new: what the new filter allows of the agent's calls
 * (hi_gate_groups_allowed, run before the call), bad and actions: the
 * first call of each group it refuses and how (kept in the gate for the
 * cli's message). Written only when the
 * result is sure: the agent had the installer's filters, and those were
 * judged (at start by the injector, or by an earlier verdict). Memory
 * only. Returns whether it was written. */
bool pl_seccomp_self_verdict(int filters_before, uint32_t groups_new, const int8_t bad[HI_GATE_NGROUPS],
                             const uint32_t actions[HI_GATE_NGROUPS]);

/* Installing thread, after its call: memory only. */
void pl_seccomp_release_agent(void);

/* Forgets the watch (the agent leaves: the descriptor is closed when the
 * verdict allows it). */
void pl_seccomp_watch_stop(void);

/* In a fork child whose own session starts (fork_follow.h): drops what the
 * parent's watch held, so the child's agent watches itself. */
void pl_seccomp_watch_atfork_child(void);

#endif /* HI_PAYLOAD_SECCOMP_WATCH_H */
