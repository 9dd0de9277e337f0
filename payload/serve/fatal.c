/* fatal.c - a last snapshot when the target gets a fatal signal (see fatal.h).
 *
 * The handler runs on the dying thread and only does what is
 * async-signal-safe: loads and stores of words, write(2) to the agent's
 * eventfd, futex(2) with a timeout, clock_gettime, sigaction, getpid and
 * gettid (only where memory cannot tell: see fatal_handler) and
 * rt_tgsigqueueinfo/tgkill. The snapshot itself is built and
 * sent by the agent thread, which takes the payload's table locks; those
 * are held only inside the payload's guard (thread.h), so a thread that
 * dies inside the guard does not wait: the agent could meet its lock.
 */
#include "payload/serve/fatal.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "payload/record/record.h"
#include "payload/sys/sys.h"

static const int pl_fatal_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define PL_FATAL_NSIGS (sizeof(pl_fatal_sigs) / sizeof(pl_fatal_sigs[0]))

static uint64_t pl_fatal_mask;   /* 1 << signo of those we installed (start lock; atomic) */
/* The process the handler was installed for (raw getpid at install): a
 * child made by any kind of fork (_Fork, clone, syscall(SYS_fork), vfork:
 * no atfork handler runs) has no agent and dies at once. */
static pid_t pl_fatal_pid;
/* 1 in the process the handler was installed for, 0 in a child of
 * fork() (our atfork child handler): known without a system call. Forks
 * are counted by our prepare handler (before each fork(), in the parent:
 * the child has the count too), installs note the count: an install
 * with the child's count was made in the child itself (a followed
 * child's session, fork_follow.h, whose handler runs before ours). */
static int pl_fatal_here;
static unsigned pl_fatal_forks, pl_fatal_install_forks;
/* What each signal's action was before ours, as the kernel holds it
 * (flags with SA_RESTORER or not, restorer, mask): put back exactly. */
struct pl_ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};
static struct pl_ksigaction pl_fatal_orig[PL_FATAL_NSIGS];
/* The agent's wake-up (given at install, before any handler of ours). */
static void (*pl_fatal_wake_agent)(void);
static int pl_fatal_receiver;    /* agent: a cli would get the snapshot (atomic) */
static int pl_fatal_busy;        /* a thread is waiting in the handler (atomic) */
/* Futex word: 0 nothing, 1 a dying thread waits, 2 the agent sent its
 * snapshot. */
static int pl_fatal_word;
static struct pl_fatal_event pl_fatal_ev; /* written before the word goes 1 */

static void fatal_handler(int sig, siginfo_t *si, void *uc);

/* The kernel's sigaction, no libc in between: libc adds SA_RESTORER and
 * its restorer to what it sets, and the query is async-signal-safe. */
static int ksigaction(int sig, const struct pl_ksigaction *act, struct pl_ksigaction *old)
{
    return (int)syscall(SYS_rt_sigaction, sig, act, old, sizeof(uint64_t));
}

/* Ours by address, whatever the flags: `old = signal(SIGSEGV, h); ...;
 * signal(SIGSEGV, old)` puts our handler back without SA_SIGINFO. */
static int is_ours(const struct pl_ksigaction *ka)
{
    return ka->handler == (void *)fatal_handler;
}

static int sig_index(int sig)
{
    for (unsigned i = 0; i < PL_FATAL_NSIGS; i++)
        if (pl_fatal_sigs[i] == sig)
            return (int)i;
    return -1;
}

/* The action sig had before ours (SIG_DFL, as it was installed). */
static void put_back_original(int sig)
{
    int i = sig_index(sig);
    struct pl_ksigaction dfl;
    if (i >= 0 && ksigaction(sig, &pl_fatal_orig[i], NULL) == 0)
        return;
    memset(&dfl, 0, sizeof(dfl)); /* SIG_DFL */
    ksigaction(sig, &dfl, NULL);
}

static long futex(int *word, int op, int val, const struct timespec *ts)
{
    return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

/* Waits until the agent sets the word to 2, at most ms. */
static void wait_for_agent(int ms)
{
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (__atomic_load_n(&pl_fatal_word, __ATOMIC_ACQUIRE) == 1) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct timespec rel = { end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec };
        if (rel.tv_nsec < 0) {
            rel.tv_sec--;
            rel.tv_nsec += 1000000000L;
        }
        if (rel.tv_sec < 0)
            return;
        futex(&pl_fatal_word, FUTEX_WAIT_PRIVATE, 1, &rel); /* EINTR, EAGAIN: look again */
    }
}

/* Whether returning from the handler runs the faulting instruction again,
 * which faults again under SIG_DFL: a fault the kernel raised (si_code > 0)
 * at an instruction. An action-optional memory error (BUS_MCEERR_AO) is
 * reported at no instruction, and SIGABRT is never a fault. */
static int refaults(int sig, const siginfo_t *si)
{
    if (!si || si->si_code <= 0 || sig == SIGABRT)
        return 0;
    return !(sig == SIGBUS && si->si_code == BUS_MCEERR_AO);
}

/* Whether the calling thread's tid in struct pthread is not the one it
 * had in the process the handler was installed for: a child of _Fork
 * (memory only). */
static int moved_tid(const struct pl_tls *t)
{
    if (__atomic_load_n(&pl_forked_copy, __ATOMIC_RELAXED))
        return 1; /* a child of syscall(SYS_fork), seen by our syscall hook */
    if (pl_thread_tid_offset() < 0)
        return 0;
    int32_t own = (int32_t)pl_thread_own_tid();
    if (t->self && t->self->tid != own)
        return 1;
    return pl_stack_span_initial_thread() == 1 && own != __atomic_load_n(&pl_fatal_pid, __ATOMIC_RELAXED);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    struct pl_tls *t = &pl_tls;
    /* Installed without SA_SIGINFO (by a program that put back what
     * signal() returned), the kernel wrote no siginfo: si points at
     * whatever was on the stack. Then it is not read: treated as sent. */
    struct pl_ksigaction cur;
    if (ksigaction(sig, NULL, &cur) != 0 || !is_ours(&cur) || !(cur.flags & SA_SIGINFO))
        si = NULL;
    /* A fork child (any kind) has no agent to wait for. Memory first: a
     * process with no session, or no cli to send a snapshot to, never
     * waits, whoever it is; a child of fork() was told by our atfork
     * handler; a child of _Fork() has its new tid in struct pthread
     * (glibc passes it as the child's CLONE_CHILD_SETTID), no longer the
     * one its thread had here (its slot's, or for the initial thread the
     * pid); a child of syscall(SYS_fork) made through libc's syscall()
     * was marked by our hook of it. getpid only when memory cannot tell
     * (the raw instruction, clone, vfork copy or share it all), with a
     * session and a cli. */
    int here = 0;
    if (t->dead != PL_TLS_AGENT && !t->guard && pl_state_get() == PL_RUNNING &&
        __atomic_load_n(&pl_fatal_receiver, __ATOMIC_ACQUIRE) && __atomic_load_n(&pl_fatal_here, __ATOMIC_RELAXED) &&
        !moved_tid(t))
        here = pl_raw_getpid() == __atomic_load_n(&pl_fatal_pid, __ATOMIC_RELAXED);
    /* The exchange last: only the thread that wins it waits. */
    int wait = here && !__atomic_exchange_n(&pl_fatal_busy, 1, __ATOMIC_ACQ_REL);
    if (wait) {
        pl_fatal_ev.signo = sig;
        pl_fatal_ev.si_code = si ? si->si_code : 0;
        pl_fatal_ev.tid = (int32_t)syscall(SYS_gettid);
        __atomic_store_n(&pl_fatal_word, 1, __ATOMIC_RELEASE);
        pl_fatal_wake_agent();
        wait_for_agent(PL_FATAL_WAIT_MS);
        __atomic_store_n(&pl_fatal_word, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&pl_fatal_busy, 0, __ATOMIC_RELEASE);
    }
    put_back_original(sig);
    if (!refaults(sig, si)) {
        /* Sent (kill, tgkill, raise, abort): again, to this thread, with
         * its siginfo. Blocked until the handler returns, then it kills. */
        pid_t pid, tid;
        if (here && pl_thread_tid_offset() >= 0) { /* no system call for either */
            pid = __atomic_load_n(&pl_fatal_pid, __ATOMIC_RELAXED);
            tid = pl_thread_own_tid();
        } else {
            pid = getpid();
            tid = (pid_t)syscall(SYS_gettid);
        }
        if (!si || syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) != 0)
            syscall(SYS_tgkill, pid, tid, sig);
    }
    errno = saved_errno;
}

/* Puts the original action back where our handler still is (by
 * address, whatever flags it was put back with). */
static void uninstall(void)
{
    uint64_t m = __atomic_exchange_n(&pl_fatal_mask, 0, __ATOMIC_ACQ_REL);
    for (unsigned i = 0; i < PL_FATAL_NSIGS; i++) {
        int sig = pl_fatal_sigs[i];
        struct pl_ksigaction cur, prev;
        if (!(m & (1ull << sig)) || ksigaction(sig, NULL, &cur) != 0 || !is_ours(&cur))
            continue;
        /* The program may install its own between the two calls: give it
         * back. */
        if (ksigaction(sig, &pl_fatal_orig[i], &prev) == 0 && !is_ours(&prev))
            ksigaction(sig, &prev, NULL);
    }
}

/* fork(): the child has no agent; it must not keep a handler of ours
 * (exec resets handlers by itself). Detached (nothing installed), only
 * the load of the mask: no page of ours is written in the child. The
 * handler's own pid check covers the forks that run no atfork handler. */
PL_FORK_TEXT static void fatal_atfork_child(void)
{
    if (!__atomic_load_n(&pl_fatal_mask, __ATOMIC_RELAXED))
        return;
    /* Installed by this very process: a followed child's session
     * (fork_follow.h), whose handler ran before this one and set
     * pl_fatal_install_forks (no getpid: a child may run under a filter
     * on it). */
    if (pl_fatal_install_forks == pl_fatal_forks)
        return;
    __atomic_store_n(&pl_fatal_here, 0, __ATOMIC_RELAXED);
    uninstall();
    pl_fatal_receiver = 0;
    pl_fatal_busy = 0;
    pl_fatal_word = 0;
}

/* Before fork(), in the parent: only while installed (no write of ours
 * otherwise). */
static void fatal_atfork_prepare(void)
{
    if (__atomic_load_n(&pl_fatal_mask, __ATOMIC_RELAXED))
        pl_fatal_forks++;
}

int pl_fatal_install(void (*wake_agent)(void))
{
    pl_fatal_wake_agent = wake_agent;
    static int atfork_registered; /* start lock */
    if (!atfork_registered && pthread_atfork(fatal_atfork_prepare, NULL, fatal_atfork_child) == 0)
        atfork_registered = 1;
    pl_fatal_install_forks = pl_fatal_forks;
    __atomic_store_n(&pl_fatal_here, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_forked_copy, 0, __ATOMIC_RELAXED); /* installed for this very process */
    struct sigaction ours;
    memset(&ours, 0, sizeof(ours));
    ours.sa_sigaction = fatal_handler;
    /* SA_ONSTACK: a program with an alternate signal stack gets the
     * handler on it (a stack overflow). Without one, a fault on a full
     * stack cannot run any handler: the kernel kills as before. */
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    __atomic_store_n(&pl_fatal_busy, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_fatal_word, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_fatal_pid, pl_raw_getpid(), __ATOMIC_RELAXED);
    int n = 0;
    for (unsigned i = 0; i < PL_FATAL_NSIGS; i++) {
        int sig = pl_fatal_sigs[i];
        struct pl_ksigaction cur;
        struct sigaction prev;
        if (ksigaction(sig, NULL, &cur) != 0 || cur.handler != (void *)SIG_DFL || (cur.flags & SA_SIGINFO))
            continue;
        pl_fatal_orig[i] = cur;
        /* libc's sigaction to install: it supplies the restorer the
         * kernel needs to return from the handler. */
        if (sigaction(sig, &ours, &prev) != 0)
            continue;
        if (prev.sa_handler != SIG_DFL || (prev.sa_flags & SA_SIGINFO)) {
            sigaction(sig, &prev, NULL); /* the program's, installed meanwhile */
            continue;
        }
        __atomic_or_fetch(&pl_fatal_mask, 1ull << sig, __ATOMIC_ACQ_REL);
        n++;
    }
    return n;
}

void pl_fatal_uninstall(void)
{
    uninstall();
    __atomic_store_n(&pl_fatal_receiver, 0, __ATOMIC_RELEASE);
}

uint64_t pl_fatal_installed(void)
{
    return __atomic_load_n(&pl_fatal_mask, __ATOMIC_ACQUIRE);
}

void pl_fatal_set_receiver(int yes)
{
    __atomic_store_n(&pl_fatal_receiver, yes != 0, __ATOMIC_RELEASE);
}

int pl_fatal_pending(struct pl_fatal_event *ev)
{
    if (__atomic_load_n(&pl_fatal_word, __ATOMIC_ACQUIRE) != 1)
        return 0;
    *ev = pl_fatal_ev;
    return 1;
}

void pl_fatal_done(void)
{
    int one = 1;
    if (!__atomic_compare_exchange_n(&pl_fatal_word, &one, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return; /* it gave up waiting */
    futex(&pl_fatal_word, FUTEX_WAKE_PRIVATE, 1, NULL);
}
