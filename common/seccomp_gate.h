/* seccomp_gate.h - the word the agent and the cli share when the target
 * installs a seccomp filter after attach (issue 25, item 1).
 *
 * The agent cannot read its own filters (PTRACE_SECCOMP_GET_FILTER works
 * on a tracee only), so once /proc/thread-self/status shows a filter that
 * was not there at attach, it turns the hooks into plain forwards and makes
 * no system call at all until a cli has run the new filters (injector/
 * seccomp_eval.c) over every call the agent would make and written which
 * groups of calls are allowed here, through /proc/PID/mem. The cli finds
 * the gate by its exported symbol in libheapinject.so. Everything is
 * naturally aligned 32/64-bit words, read and written whole.
 */
#ifndef HI_COMMON_SECCOMP_GATE_H
#define HI_COMMON_SECCOMP_GATE_H

#include <stdint.h>

#define HI_GATE_SYMBOL "heapinject_seccomp_gate"
#define HI_GATE_MAGIC 0x48494753u /* "HIGS" */
#define HI_GATE_VERSION 5u /* 2: wait_uffd and wait_addr; 3: odd_tid, odd_filters; 4: sandbox_tid; 5: verdict_by, judged_* (a cli reads 1 to 4 too) */

/* Groups of system calls the cli found allowed (hi_seccomp_gate.allowed). */
#define HI_GATE_PARK (1u << 0)     /* poll with no descriptor and no timeout: the agent sleeps for good */
#define HI_GATE_SERVE (1u << 1)    /* the socket server: poll, recv, send, accept4, close, read, ... */
#define HI_GATE_PROC (1u << 2)     /* openat/read/close of /proc files (RSS, pressure) */
#define HI_GATE_MPROTECT (1u << 3) /* mprotect around GOT slots (the agent's own restore) */
#define HI_GATE_LEAVE (1u << 4)    /* madvise (tables given back) and the agent thread's exit */
/* Other ways a sealed agent with nothing to do may sleep for good when
 * PARK's poll is refused (an allow-list built around epoll or ppoll):
 * each is restarted as itself after a stop, never through
 * restart_syscall. A cli of gate version 2 without them leaves the bits 0. */
#define HI_GATE_SLEEP_FUTEX (1u << 5) /* futex(FUTEX_WAIT_PRIVATE) with no timeout on a word never woken */
#define HI_GATE_SLEEP_PAUSE (1u << 6) /* pause(2), every signal blocked */

struct hi_seccomp_gate {
    uint32_t magic;            /* HI_GATE_MAGIC once the agent runs */
    uint32_t version;
    int32_t agent_tid;         /* agent: the thread whose filters count */
    int32_t filters_at_start;  /* agent: Seccomp_filters when it started (-1: the kernel has no such line) */
    int32_t filters_now;       /* agent: the count it saw last */
    uint32_t sealed;           /* agent: 1 = a filter came after attach: the hooks only forward and the
                                  agent makes no call that verdict has not allowed */
    int32_t verdict_for;       /* cli: the filters_now its verdict is about (written last); 0 = none */
    uint32_t allowed;          /* cli: HI_GATE_* groups every new filter allows */
    uint64_t slots;            /* agent: address of the slot table (restores from outside) */
    uint64_t nslots_addr;      /* agent: address of its uint32_t count */
    uint32_t slot_stride;      /* agent: sizeof one entry */
    uint32_t off_addr, off_orig, off_hook, off_patched; /* agent: offsets in one entry
                                                           (addr, orig, hook: uint64; patched: uint8) */
    uint32_t cli_restored;     /* cli: slots it put back through /proc/PID/mem */
    uint32_t agent_state;      /* agent: HI_GATE_AGENT_* */
    /* version 2: how a sealed agent waits without spinning or a system
     * call: it reads a page of a userfaultfd registration (made at start,
     * before any filter), and the fault sleeps in the kernel until the
     * page is filled. A cli that wrote a verdict fills wait_addr's page
     * (pidfd_getfd of wait_uffd, UFFDIO_ZEROPAGE) when it is not 0. */
    int32_t wait_uffd;         /* agent: the userfaultfd's number in the process; -1: none (it spins) */
    uint32_t wait_pad;
    uint64_t wait_addr;        /* agent: the page it is about to read or reads, 0 when not waiting */
    /* version 3: a thread whose filters came after attach without TSYNC
     * (its own only): the agent thread's filters are still the ones the
     * attach checked, so the agent serves on, but the hooks run in that
     * thread too and their calls (gettid, rt_sigprocmask, futex, mmap)
     * were never run through its filters: the hooks go off for good.
     * Written by the agent (its scan of /proc/self/task) or by a cli
     * (its own scan before a request; the agent reads odd_tid at its next
     * look and turns the hooks off too). */
    int32_t odd_tid;           /* 0: every thread has the agent's filter count */
    int32_t odd_filters;       /* that thread's Seccomp_filters */
    /* version 4: a thread called prctl(PR_SET_SECCOMP), seccomp(2) or
     * syscall(SYS_seccomp or SYS_prctl) through a slot of ours (payload/
     * interpose/hooks_sandbox.c): the hooks went off for good before the
     * filter went in. Written by that thread before its call; odd_tid
     * follows after a filter of its own went in (no TSYNC), a TSYNC one
     * seals the agent as any. */
    int32_t sandbox_tid;       /* 0: none */
    int32_t sandbox_pid;       /* the process it was in (a fork child forgets its parent's) */
    /* version 5: a TSYNC filter installed through a slot of ours is run
     * by the installing thread over the agent's calls before it goes in
     * (common/seccomp_gate_calls.h), and the verdict written by that
     * thread as a cli would (verdict_by 1), so the agent never waits for
     * a cli. What the filter refused is kept for the cli's message. */
    uint32_t verdict_by;       /* 0: a cli; 1: the installing thread (then judged_* are set) */
    int8_t judged_bad[8];      /* per group (bit index): the first call in hi_gate_calls the new filter refuses, -1 none */
    uint32_t judged_action[8]; /* its SECCOMP_RET_* */
};

/* e2e rel_seccomp_thread_late reads odd_tid at this offset (no cli
 * command between the filter and the worker's allocations). */
_Static_assert(__builtin_offsetof(struct hi_seccomp_gate, odd_tid) == 96, "odd_tid moved: update the e2e test");

#define HI_GATE_AGENT_RUNNING 0u
#define HI_GATE_AGENT_WAITING 1u  /* sealed, until a verdict: asleep in a fault (or spinning without a userfaultfd) */
#define HI_GATE_AGENT_SERVING 2u  /* sealed, serving within the verdict */
#define HI_GATE_AGENT_PARKED 3u   /* sealed, asleep for good (poll with no timeout) */
#define HI_GATE_AGENT_STUCK 4u    /* sealed, no verdict allows even a sleep: asleep in a fault (or spinning) */

#endif /* HI_COMMON_SECCOMP_GATE_H */
