/* session.h - the state of the current attach session, shared by the hooks,
 * the agent and start/stop (session.c; the teardown: serve/teardown.h).
 *
 * pl_live_key is the one word the hooks' fast path reads: PL_KEY_OFF while
 * detached, otherwise (session << 32 | rate generation). A thread whose TLS
 * key equals it is attached, outside any reentrancy guard, and has drawn its
 * countdown at the current rate; anything else goes to the slow path.
 */
#ifndef HI_PAYLOAD_SESSION_H
#define HI_PAYLOAD_SESSION_H

#include <stdint.h>
#include <time.h>

#define PL_KEY_OFF UINT64_MAX

/* Hidden (as the whole payload is): the hooks then load it with one
 * rip-relative mov instead of an address from the GOT and a load. */
extern uint64_t pl_live_key __attribute__((visibility("hidden"))); /* written by start/stop and SET_RATE (start lock) */
extern uint32_t pl_session_id;   /* >= 1 once started; written by start */
extern uint64_t pl_session_rate; /* current mean sampling interval */
extern uint64_t pl_attach_ns;    /* CLOCK_MONOTONIC when the hooks went live */
extern uint64_t pl_dropped;      /* samples lost to full tables (atomic) */
/* 1 in a child made by syscall(SYS_fork) through libc's syscall() (our
 * hook saw it return 0, interpose/hooks_sandbox.c): a copy of the
 * process, told from it without a system call (serve/fatal.c). */
extern uint32_t pl_forked_copy;
extern uint64_t pl_walks_unkept; /* of those, walks whose stack found no bucket
                                    (the stack table full): the others are in
                                    their bucket's raw_alloc_objs (atomic) */

static inline uint64_t pl_key_load(void)
{
    return __atomic_load_n(&pl_live_key, __ATOMIC_RELAXED);
}

/* Allocation time of a sample: the coarse clock (the vDSO copies the last
 * tick's time: no TSC read and scaling), never before the attach time it
 * is compared with. Ages are reported in milliseconds; the coarse clock is
 * at most one tick (1-10 ms) behind. */
static inline uint64_t pl_sample_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return t < pl_attach_ns ? pl_attach_ns : t;
}

enum pl_state {
    PL_IDLE = 0,     /* no session, no agent thread */
    PL_RUNNING = 1,  /* hooks live, agent serving */
    PL_STOPPING = 2, /* slots restored, agent closing down */
};

/* Current state (atomic). */
int pl_state_get(void);

/* The start lock: heapinject_start holds it from its check of the state
 * to the end of its setup; the functions below take it themselves. */
void pl_session_lock(void);
void pl_session_unlock(void);

/* Thread tid of process pid is about to install a seccomp filter: the
 * hooks go off for good (no start or rate change turns them on again: the
 * gate's bar, payload/sys/seccomp_watch.h). Takes the start lock when it
 * can within 1 s. */
void pl_session_seal_hooks(int tid, int pid);

/* Under the start lock: a new session at rate is live (key, id, attach
 * time; state RUNNING). Its undoing is payload/serve/teardown.h's. */
void pl_session_begin(uint64_t rate);

/* The state's one writer outside this file: the teardown (release). */
void pl_state_set(int state);

/* Makes pl_session_rate = rate and bumps the rate generation so every
 * thread redraws its countdown on its next hooked call. Takes the start
 * lock; does nothing unless a session is running. */
void pl_session_set_rate(uint64_t rate);

/* fork(): in the child, no session and a fresh lock. */
void pl_session_atfork_child(void);

#endif /* HI_PAYLOAD_SESSION_H */
