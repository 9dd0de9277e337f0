/* ptrace_session.c - holding ONE thread of the target with PTRACE_SEIZE.
 *
 * Only the seized thread stops; the others keep running, so a lock another
 * thread holds is released in time. Stops are told apart by the waitpid
 * status (ptrace(2), "Stopped states"): status>>16 == PTRACE_EVENT_STOP is
 * our interrupt or a group-stop, a plain stop is a signal-delivery-stop. */
#include "injector/ptrace_session.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "injector/arch.h"
#include "injector/log.h"
#include "injector/target.h"

int inj_thread_seize(struct inj_thread *t, pid_t pid, pid_t tid)
{
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->tid = tid;
    t->wait_syscall = -1;
    if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD) == -1)
        return -errno;
    t->seized = true;
    t->stop = INJ_STOP_NONE;
    return 0;
}

/* One waitpid result folded into t. Returns 1 when the thread is now in a
 * stop the caller should see, 0 when it was passed through and is running
 * again, -ESRCH when it exited, or -errno. */
static int absorb_status(struct inj_thread *t, int st)
{
    int sig, event;

    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        t->stop = INJ_STOP_EXITED;
        t->exit_status = st;
        t->seized = false;
        return -ESRCH;
    }
    if (!WIFSTOPPED(st))
        return 0;
    sig = WSTOPSIG(st);
    event = (st >> 16) & 0xff;
    t->stop_sig = sig;
    if (sig == (SIGTRAP | 0x80)) {
        /* Only after PTRACE_SYSCALL, which a caller asked for. */
        t->stop = INJ_STOP_SYSCALL;
        return 1;
    }
    if (event == PTRACE_EVENT_STOP) {
        t->stop = INJ_STOP_EVENT;
        return 1;
    }
    if (event != 0) {
        /* No options are set, so no other event should come; go on. */
        if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) == -1)
            return errno == ESRCH ? -ESRCH : -errno;
        t->stop = INJ_STOP_NONE;
        return 0;
    }
    t->stop = INJ_STOP_SIGNAL;
    memset(&t->stop_info, 0, sizeof(t->stop_info));
    if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &t->stop_info) == -1)
        t->stop_info.si_signo = sig;
    if (t->hold_signals)
        return 1;
    /* No call of ours runs: the signal is the target's business, deliver it
     * now as if we were not there. */
    if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)sig) == -1)
        return errno == ESRCH ? -ESRCH : -errno;
    t->stop = INJ_STOP_NONE;
    return 0;
}

/* Sleeps until a SIGCHLD is pending (a ptrace stop of our tracee sends
 * one to its tracer: do_notify_parent_cldstop) or max_us passed. The
 * caller blocks SIGCHLD, so one that came after its last waitpid is kept
 * pending and ends this wait at once: no stop is missed, and none waits
 * for a poll interval (attaching makes a dozen round trips; polling with
 * a backoff added up to 1.3 ms to each, more on a busy machine). Should
 * SIGCHLD be ignored (inherited SIG_IGN sends none), this is the poll. */
static atomic_int shared_sigchld;

void inj_ptrace_shared_sigchld(bool shared)
{
    atomic_store(&shared_sigchld, shared);
}

static void wait_sigchld(long max_us)
{
    if (atomic_load(&shared_sigchld) && max_us > 1000)
        max_us = 1000;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    struct timespec ts = { max_us / 1000000, (max_us % 1000000) * 1000 };
    sigtimedwait(&chld, NULL, &ts);
}

int inj_thread_wait(struct inj_thread *t, int timeout_ms)
{
    long long deadline = timeout_ms >= 0 ? inj_now_ms() + timeout_ms : -1;
    sigset_t chld, old;
    int ret;

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    for (;;) {
        int st, r;
        pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);

        if (w == -1) {
            if (errno == EINTR)
                continue;
            if (errno == ECHILD) {
                /* Not ours to wait for any more: the thread is gone. */
                t->stop = INJ_STOP_EXITED;
                t->seized = false;
                ret = -ESRCH;
                break;
            }
            ret = -errno;
            break;
        }
        if (w == t->tid) {
            r = absorb_status(t, st);
            if (r != 0) {
                ret = r < 0 ? r : 0;
                break;
            }
            continue;
        }
        if (deadline >= 0 && inj_now_ms() >= deadline) {
            ret = -ETIMEDOUT;
            break;
        }
        /* Woken by the stop's SIGCHLD; the bound only re-checks the
         * deadline (and is the poll when SIGCHLD is ignored). */
        wait_sigchld(2000);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return ret;
}

int inj_thread_interrupt(struct inj_thread *t, int timeout_ms)
{
    if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == -1)
        return -errno;
    return inj_thread_wait(t, timeout_ms);
}

/* Resumes a stopped thread and waits for its next stop, holding every
 * signal that stops it on the way (at most 8), until a stop that is not a
 * signal-delivery-stop or, when want is not 0, the one for our own
 * tgkill of signal want. Leaves hold_signals set. 0 or as inj_thread_wait. */
static int resume_past_signals(struct inj_thread *t, int timeout_ms, int want)
{
    t->hold_signals = true;
    int r = inj_thread_resume(t);
    for (int i = 0; r == 0 && i < 8; i++) {
        r = inj_thread_wait(t, timeout_ms);
        if (r || t->stop != INJ_STOP_SIGNAL)
            return r;
        if (want && t->stop_info.si_signo == want && t->stop_info.si_code == SI_TKILL)
            return 0;
        inj_thread_hold_signal(t);
        r = inj_thread_resume(t);
    }
    return r;
}

int inj_thread_park(struct inj_thread *t, int timeout_ms)
{
    bool hold = t->hold_signals;
    int r;

    if (t->stop == INJ_STOP_EVENT)
        return 0;
    if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == -1)
        return -errno;
    /* The interrupt trap comes before any signal (get_signal takes job
     * control traps first): a signal-delivery-stop here is unexpected, and
     * its signal is kept for later. */
    r = resume_past_signals(t, timeout_ms, 0);
    t->hold_signals = hold;
    if (r)
        return r;
    return t->stop == INJ_STOP_EVENT ? 0 : -EAGAIN;
}

/* Whether the thread's mask when we stopped it blocks sig. */
static bool wait_blocks(const struct inj_thread *t, int sig)
{
    return t->have_wait_blocked && sig >= 1 && sig <= 64 && (t->wait_blocked & (1ull << (sig - 1)));
}

/* Until the detached thread sleeps in its syscall again (/proc's syscall
 * file names it), at most 200 ms: a signal that its call's own mask blocks,
 * sent before that, would still meet the kernel's restart decision or the
 * usual mask and end the call with EINTR. */
static void wait_back_in_syscall(const struct inj_thread *t)
{
    char path[64], buf[64];

    if (t->wait_syscall < 0)
        return;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)t->pid, (int)t->tid);
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(path, "re");
        if (!f)
            return;
        bool in = fgets(buf, sizeof(buf), f) && strtol(buf, NULL, 10) == t->wait_syscall &&
                  strncmp(buf, "running", 7) != 0;
        fclose(f);
        if (in)
            return;
        inj_sleep_us(1000);
    }
}

/* Detaching from an event stop cannot hand over a signal (PTRACE_DETACH
 * ignores its signal there), so the first held signal is raised again and
 * its signal-delivery-stop caught: the detach then delivers it with its
 * original siginfo, before the thread leaves the kernel's signal handling
 * (an interrupted pause() or epoll_wait() ends with EINTR, as it would
 * have without us). Other signals that stop the thread first are held
 * too. Stays in the event stop when that fails. */
static void to_signal_stop(struct inj_thread *t)
{
    int sig = t->held[0].si_signo;

    /* Blocked inside the call the thread waits in (sigsuspend, ppoll,
     * pselect, epoll_pwait with their own mask): natively it would have
     * stayed pending, not ended the call with EINTR. It is queued again
     * after the detach instead, when the call is back with its mask. */
    if (wait_blocks(t, sig))
        return;
    if (syscall(SYS_tgkill, t->pid, t->tid, sig) != 0)
        return;
    int r = resume_past_signals(t, 1000, sig);
    t->hold_signals = false;
    if (r == 0 && t->stop == INJ_STOP_SIGNAL)
        return; /* ours: the detach delivers held[0] in its place */
    /* Not caught: the raised copy is pending or delivered already (with
     * our siginfo); it must not be sent a second time. */
    t->nheld--;
    memmove(&t->held[0], &t->held[1], sizeof(t->held[0]) * (size_t)t->nheld);
}

void inj_thread_read_wait_mask(struct inj_thread *t)
{
    struct inj_target_status st;

    t->have_wait_blocked = inj_target_status(t->tid, &st) == 0 && st.have_sigblk;
    t->wait_blocked = st.sigblk;
}

int inj_thread_resume(struct inj_thread *t)
{
    if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) == -1)
        return -errno;
    t->stop = INJ_STOP_NONE;
    return 0;
}

int inj_thread_resume_syscall(struct inj_thread *t)
{
    if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) == -1)
        return -errno;
    t->stop = INJ_STOP_NONE;
    return 0;
}

void inj_thread_hold_signal(struct inj_thread *t)
{
    int sig = t->stop_info.si_signo ? t->stop_info.si_signo : t->stop_sig;

    /* Standard signals do not queue: one pending instance is all the
     * target could have seen. Real-time signals are kept each. */
    if (sig < SIGRTMIN)
        for (int i = 0; i < t->nheld; i++)
            if (t->held[i].si_signo == sig)
                return;
    if (t->nheld == INJ_MAX_HELD_SIGNALS) {
        t->dropped++;
        return;
    }
    t->held[t->nheld] = t->stop_info;
    t->held[t->nheld].si_signo = sig;
    t->nheld++;
}

static void requeue(pid_t pid, pid_t tid, const siginfo_t *info)
{
    siginfo_t copy = *info;

    /* rt_tgsigqueueinfo keeps si_code and the value, but the kernel only
     * accepts negative codes other than SI_TKILL from another process;
     * kernel- and kill()-generated signals go back with tgkill. */
    if (info->si_code < 0 && info->si_code != SI_TKILL &&
        syscall(SYS_rt_tgsigqueueinfo, pid, tid, info->si_signo, &copy) == 0)
        return;
    syscall(SYS_tgkill, pid, tid, info->si_signo);
}

int inj_thread_detach(struct inj_thread *t)
{
    int first = 0, err = 0;

    if (!t->seized)
        return 0;
    if (t->stop == INJ_STOP_EVENT && t->nheld > 0)
        to_signal_stop(t);
    if (t->stop == INJ_STOP_NONE) {
        /* Running: PTRACE_DETACH needs a stopped tracee. */
        bool hold = t->hold_signals;

        t->hold_signals = false;
        err = inj_thread_interrupt(t, 1000);
        t->hold_signals = hold;
        if (err == -ESRCH)
            return 0;
    }
    if (t->stop == INJ_STOP_SIGNAL && t->nheld > 0) {
        /* A detach from a signal-delivery-stop delivers its signal argument
         * with the siginfo set here: the first held signal arrives exactly
         * as it was sent. */
        if (ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &t->held[0]) == 0)
            first = 1;
    }
    /* The others are queued while the thread is still stopped: all of
     * them are pending when it leaves the kernel, so every handler runs
     * before an interrupted call returns, once, as without us (queued
     * after the detach, a second one could end a restarted pause()).
     * Except those the call the thread waits in blocks with its own mask:
     * pending now, they would meet the thread's usual mask on its way out
     * and end that call with EINTR; queued after the detach, they find the
     * call back in place and wait, as they would have. */
    for (int i = first; i < t->nheld; i++)
        if (!wait_blocks(t, t->held[i].si_signo))
            requeue(t->pid, t->tid, &t->held[i]);
    if (ptrace(PTRACE_DETACH, t->tid, NULL,
               (void *)(long)(first ? t->held[0].si_signo : 0)) == -1) {
        err = errno == ESRCH ? 0 : -errno;
        if (first && err)
            requeue(t->pid, t->tid, &t->held[0]);
    } else {
        err = 0;
    }
    t->seized = false;
    t->stop = INJ_STOP_NONE;
    bool waited = false;
    for (int i = first; i < t->nheld; i++)
        if (wait_blocks(t, t->held[i].si_signo)) {
            if (!waited)
                wait_back_in_syscall(t);
            waited = true;
            requeue(t->pid, t->tid, &t->held[i]);
        }
    t->nheld = 0;
    return err;
}

void inj_thread_describe_exit(int status, char *buf, size_t len)
{
    if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited");
}

long inj_thread_undo_stop_eintr(pid_t tid)
{
    inj_gregs_t gp;

    if (ptrace(PTRACE_GETREGS, tid, NULL, &gp) != 0)
        return -1;
    if (!inj_arch_restart_eintr(&gp) && !inj_arch_restart_eintr_fd(tid, &gp))
        return -1;
    return ptrace(PTRACE_SETREGS, tid, NULL, &gp) == 0 ? (long)gp.orig_rax : -1;
}
