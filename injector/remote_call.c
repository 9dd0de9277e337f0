/* remote_call.c - calling a function inside the target on a held thread.
 *
 * The thread is in a ptrace-stop. We save every register (general, x87/SSE/
 * AVX via XSAVE) and its signal mask, point rip at the function with the
 * stack below the red zone and a return address that faults, resume, and
 * wait for the fault. Then the saved registers go back unchanged: when the
 * thread had been interrupted in a syscall, rax = -ERESTART* and orig_rax =
 * the syscall number, and the kernel restarts the syscall on resume (we
 * never move rip ourselves, see DESIGN.md "Syscall restart").
 *
 * Rescue mode (remote_rescue.c) makes the same calls return through a
 * signal frame. Both modes wait for the thread's stops here: what is not
 * the end of a call (a group-stop, a seccomp TRAP, a fault, a signal for
 * the target) is handled once, by inj_call_other_stop. */
#include "injector/remote_call.h"
#include "injector/remote_call_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "injector/error.h"
#include "injector/log.h"
#include "injector/mem.h"
#include "injector/seccomp_eval.h"
#include "injector/target.h"

#include <linux/audit.h>

/* ESRCH from a write: the process is gone or going (killed while held);
 * said in words before the call that met it. */
static const char *exited_prefix(int r, pid_t pid)
{
    static __thread char buf[96];
    if (r != -ESRCH)
        return "";
    snprintf(buf, sizeof(buf), "pid %d exited during the injection: ", (int)pid);
    return buf;
}


int inj_call_begin(struct inj_call *c, struct inj_thread *t, bool verbose, char *err,
                   size_t errlen)
{
    int r;

    memset(c, 0, sizeof(*c));
    c->t = t;
    c->verbose = verbose;
    c->seccomp_syscall = -1;
    r = inj_arch_save(t->tid, &c->saved);
    if (r) {
        inj_arch_release(&c->saved);
        if (r == -ESRCH)
            return inj_err(err, errlen, INJ_EEXITED, "pid %d exited while being injected",
                           t->pid);
        return inj_err(err, errlen, INJ_EINTERNAL, "saving registers of thread %d: %s",
                       t->tid, strerror(-r));
    }
    c->saved_ok = true;
    if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(c->sigmask), &c->sigmask) == 0)
        c->have_sigmask = true;
    inj_thread_read_wait_mask(t);
    t->wait_syscall = inj_arch_interrupted_syscall(&c->saved.gp);
    c->scratch_top = inj_arch_sp(&c->saved.gp) - INJ_ARCH_RED_ZONE;
    c->scratch_lo = c->scratch_top;
    return INJ_OK;
}

int inj_call_put_string(struct inj_call *c, const char *s, uint64_t *addr, char *err,
                        size_t errlen)
{
    size_t len = strlen(s) + 1;
    uint64_t at;
    int r;

    if (c->page) {
        /* Rescue mode: the stack below the red zone holds the frame. */
        if (c->str_lo - c->page < RESCUE_STUB_ROOM + len)
            return inj_err(err, errlen, INJ_EINTERNAL,
                           "strings for the target exceed %d bytes", SCRATCH_MAX);
        at = (c->str_lo - len) & ~(uint64_t)7;
        r = inj_mem_write(c->t->tid, at, s, len);
        if (r)
            return inj_err(err, errlen, r == -ESRCH ? INJ_EEXITED : INJ_EINTERNAL,
                           "%swriting %zu bytes to pid %d at 0x%llx: %s", exited_prefix(r, c->t->pid), len,
                           c->t->pid, (unsigned long long)at, strerror(-r));
        c->str_lo = at;
        *addr = at;
        return INJ_OK;
    }

    if (c->scratch_top - c->scratch_lo + len > SCRATCH_MAX)
        return inj_err(err, errlen, INJ_EINTERNAL,
                       "strings for the target exceed %d bytes", SCRATCH_MAX);
    at = (c->scratch_lo - len) & ~(uint64_t)7;
    r = inj_mem_write(c->t->tid, at, s, len);
    if (r)
        return inj_err(err, errlen, r == -ESRCH ? INJ_EEXITED : INJ_EINTERNAL,
                       "%swriting %zu bytes to the stack of thread %d at 0x%llx: %s", exited_prefix(r, c->t->pid),
                       len, c->t->tid, (unsigned long long)at, strerror(-r));
    c->scratch_lo = at;
    *addr = at;
    return INJ_OK;
}

static bool is_fault(const siginfo_t *si)
{
    /* Synchronous faults raised by the CPU carry a positive si_code; the
     * same signal sent with kill() has SI_USER/SI_TKILL and is just held. */
    switch (si->si_signo) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP:
        return si->si_code > 0;
    default:
        return false;
    }
}

int inj_call_exited(struct inj_call *c, char *err, size_t errlen, const char *what)
{
    char how[96];

    inj_thread_describe_exit(c->t->exit_status, how, sizeof(how));
    return inj_err(err, errlen, INJ_EEXITED, "pid %d %s during the call to %s()",
                   c->t->pid, c->t->exit_status ? how : "exited", what);
}

/* Removes from the held signals the SIGABRTs the process sent itself
 * (raise, abort: si_pid is its own pid) while our call ran. Returns how
 * many. */
static int drop_own_aborts(struct inj_thread *t)
{
    int kept = 0, dropped = 0;
    for (int i = 0; i < t->nheld; i++) {
        const siginfo_t *si = &t->held[i];
        if (si->si_signo == SIGABRT && si->si_code <= 0 && si->si_pid == t->pid) {
            dropped++;
            continue;
        }
        t->held[kept++] = *si;
    }
    t->nheld = kept;
    return dropped;
}

/* ---- the stops of a call, in either mode ------------------------------- */

/* Resumes the held thread the way its mode waits: to the next signal (a
 * plain call ends in a trap), or also to the next system call (a rescue
 * call ends at its frame's rt_sigreturn or our munmap). */
int inj_call_resume(struct inj_call *c)
{
    return c->rescue ? inj_thread_resume_syscall(c->t) : inj_thread_resume(c->t);
}

/* The next stop of the thread, however long the call takes (its progress
 * logged every CALL_PROGRESS_MS). 0 or -errno. */
int inj_call_wait_stop(struct inj_call *c, const char *what, int *waited)
{
    for (;;) {
        int r = inj_thread_wait(c->t, CALL_PROGRESS_MS);
        if (r != -ETIMEDOUT)
            return r;
        *waited += CALL_PROGRESS_MS / 1000;
        inj_log(c->verbose, "still waiting for %s() in thread %d (%d s)", what, c->t->tid, *waited);
    }
}

/* A stop that is not the end of the call, the same in both modes: a
 * group-stop or a stray event (the call finishes first; the stop signal
 * is held), a seccomp TRAP (the system call fails with ENOSYS so that the
 * call unwinds cleanly: dlopen releases its locks and reports an error),
 * a fault (the call is over: the registers are restored by the caller),
 * or a signal for the target that waits until we are done. Returns true
 * when the call is over, with its result in *result; false when the
 * thread was resumed (*r: the resume's result). */
bool inj_call_other_stop(struct inj_call *c, const char *what, int *r, int *result, char *err, size_t errlen)
{
    struct inj_thread *t = c->t;
    if (t->stop == INJ_STOP_EVENT) {
        *r = inj_call_resume(c);
        return false;
    }
    if (t->stop_sig == SIGSYS && t->stop_info.si_code > 0) {
        if (c->seccomp_syscall < 0)
            c->seccomp_syscall = t->stop_info.si_syscall;
        inj_log(c->verbose, "seccomp filter trapped syscall %d in %s(); failing it with ENOSYS",
                t->stop_info.si_syscall, what);
        *r = inj_arch_fail_syscall(t->tid, ENOSYS);
        if (*r == 0)
            *r = inj_call_resume(c);
        return false;
    }
    if (is_fault(&t->stop_info)) {
        inj_gregs_t now;
        int sig = t->stop_sig;

        memset(&now, 0, sizeof(now));
        ptrace(PTRACE_GETREGS, t->tid, NULL, &now);
        c->crashed = true;
        t->hold_signals = false;
        /* glibc's abort() inside the call (malloc finding the heap corrupt,
         * a failed assertion) raises SIGABRT at its own thread, which we
         * held, and then faults: that SIGABRT is the abandoned call's, and
         * delivering it at detach killed the process right after we said
         * the signal was suppressed (issue 25). Dropped, and said. */
        int aborts = drop_own_aborts(t);
        *result = inj_err(err, errlen, INJ_EINTERNAL,
                          "%s() faulted in pid %d with SIG%s at pc 0x%llx (address %p)%s; the thread's "
                          "registers were put back and the SIG%s was not delivered%s, but what the call did "
                          "before (locks it held, memory it changed) cannot be undone: the process may hang "
                          "or fail later",
                          what, t->pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
                          (unsigned long long)inj_arch_ip(&now), t->stop_info.si_addr,
                          aborts ? " after calling abort() (glibc found its heap corrupt, or an assertion failed)" : "",
                          sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
                          aborts ? ", nor the SIGABRT that abort() raised" : "");
        return true;
    }
    inj_log(c->verbose, "holding signal %d for thread %d until the call is done", t->stop_sig, t->tid);
    inj_thread_hold_signal(t);
    *r = inj_call_resume(c);
    return false;
}

/* A call that could not be set up (r: -errno): the thread is gone, or say
 * what failed. */
int inj_call_setup_failed(struct inj_call *c, int r, const char *what, char *err, size_t errlen)
{
    if (r == -ESRCH)
        return inj_call_exited(c, err, errlen, what);
    return inj_err(err, errlen, INJ_EINTERNAL, "setting up the call to %s() in thread %d: %s", what, c->t->tid,
                   strerror(-r));
}

/* The end of a wait loop that failed (r: -errno). */
int inj_call_wait_failed(struct inj_call *c, int r, const char *what, char *err, size_t errlen)
{
    c->t->hold_signals = false;
    if (r == -ESRCH)
        return inj_call_exited(c, err, errlen, what);
    return inj_err(err, errlen, INJ_EINTERNAL, "waiting for %s() in thread %d: %s", what, c->t->tid,
                   strerror(-r));
}

int inj_call_run(struct inj_call *c, const char *what, uint64_t fn, const uint64_t *args,
                 int nargs, uint64_t *ret, char *err, size_t errlen)
{
    struct inj_thread *t = c->t;
    uint64_t call_sp, sigmask;
    int r, waited = 0;

    if (c->rescue)
        return inj_rescue_run(c, what, fn, args, nargs, RET_STUB, ret, err, errlen);
    c->crashed = false;
    /* The return trap is a SIGSEGV: the kernel would force-unblock it and
     * reset a blocked SIGSEGV's handler to the default, so unblock it
     * ourselves for the call (inj_call_end restores the mask). */
    if (c->have_sigmask && (c->sigmask & (1ULL << (SIGSEGV - 1)))) {
        sigmask = c->sigmask & ~(1ULL << (SIGSEGV - 1));
        ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(sigmask), &sigmask);
    }
    r = inj_arch_start_call(t->tid, &c->saved, fn, args, nargs, c->scratch_lo, &call_sp);
    if (r)
        return inj_call_setup_failed(c, r, what, err, errlen);
    t->hold_signals = true;
    c->at = INJ_AT_TRAP;
    r = inj_thread_resume(t);
    while (r == 0) {
        int result;
        if ((r = inj_call_wait_stop(c, what, &waited)) != 0)
            break;
        /* Our return trap: a SIGSEGV at the return address we planted. */
        if (t->stop == INJ_STOP_SIGNAL && t->stop_sig == SIGSEGV && t->stop_info.si_code > 0) {
            inj_gregs_t now;

            if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == -1) {
                r = -errno;
                break;
            }
            if (inj_arch_returned(&now, call_sp)) {
                *ret = inj_arch_retval(&now);
                t->hold_signals = false;
                return INJ_OK;
            }
        }
        if (inj_call_other_stop(c, what, &r, &result, err, errlen))
            return result;
    }
    return inj_call_wait_failed(c, r, what, err, errlen);
}

/* The thread's own signal mask back, as saved at inj_call_begin. */
static void restore_sigmask(struct inj_call *c)
{
    if (c->have_sigmask)
        ptrace(PTRACE_SETSIGMASK, c->t->tid, (void *)sizeof(c->sigmask), &c->sigmask);
}

/* A syscall rewound by hand runs again from its instruction: a signal that
 * comes before the thread is back in it (held during our call and sent
 * again at the detach, or sent just after) runs its handler and the
 * syscall starts over, so a pause() or an epoll_wait() that it should
 * have ended with EINTR sleeps on: a lost wakeup, and a program waiting
 * for that signal hangs (tests/e2e/inject_pause_wakeup.sh). So the thread
 * goes on into an interrupt stop, which it takes inside the kernel's
 * signal handling before it returns to user mode (inj_thread_park), and
 * the exact saved registers (rax = -ERESTART*) go back there: on resume
 * the kernel's own restart decides, as DESIGN.md "Syscall restart" wants,
 * EINTR for a signal with a handler, a restart otherwise. Should we die
 * on the way, the thread runs on with the registers rewound by hand, as
 * before. Returns 0 (also when the thread could not be parked: it then
 * keeps those registers), -ESRCH, or -errno of the restore. */
static int restore_exactly(struct inj_call *c)
{
    inj_log(c->verbose, "parking thread %d for the kernel's own syscall restart", c->t->tid);
    int r = inj_thread_park(c->t, 2000);

    if (r == -ESRCH)
        return r;
    if (r) {
        inj_log(c->verbose, "thread %d not parked for its syscall restart (%s): it restarts "
                "from its instruction", c->t->tid, strerror(-r));
        return 0;
    }
    r = inj_arch_restore(c->t->tid, &c->saved);
    restore_sigmask(c);
    return r;
}

int inj_call_end(struct inj_call *c, char *err, size_t errlen)
{
    int r = 0;

    if (!c->saved_ok)
        return INJ_OK;
    if (c->rescue && c->page && c->t->stop != INJ_STOP_EXITED) {
        /* Our page goes; if we die now the thread still restores itself. */
        uint64_t args[2] = { c->page, c->page_len }, ignored;
        char e2[256];

        c->page = 0;
        if (inj_rescue_run(c, "munmap", c->munmap_fn, args, 2, RET_RESTORER, &ignored, e2,
                       sizeof(e2)) != INJ_OK)
            inj_log(c->verbose, "unmapping the rescue page: %s", e2);
        else if (inj_rescue_mapped_exactly(c->t->tid, args[0], args[1]))
            /* A seccomp filter that refuses munmap: nothing else to do. */
            inj_log(c->verbose, "munmap of the rescue page failed: its %llu bytes stay in the "
                    "target", (unsigned long long)args[1]);
        else
            inj_log(c->verbose, "rescue page unmapped");
    }
    if (c->t->stop == INJ_STOP_EXITED) {
        /* nothing to restore */
    } else if (c->at == INJ_AT_EXIT) {
        /* rt_sigreturn ran: registers, FP state and signal mask are those
         * of the frame, i.e. the saved ones with an interrupted syscall
         * rewound by hand. Without a restart block to keep, the exact
         * registers go back in an interrupt stop (restore_exactly). */
        if (inj_arch_interrupted_syscall(&c->saved.gp) >= 0 &&
            !inj_arch_restart_uses_block(&c->saved.gp))
            r = restore_exactly(c);
    } else if (c->at == INJ_AT_ENTRY || c->at == INJ_AT_UNMAP) {
        /* Skip the rt_sigreturn (orig_rax = -1) and put the saved
         * registers back at its entry (or at the stub's munmap, which is
         * skipped the same way, or at the exit of our mmap, should the
         * unmapping above have failed: the page then stays, as the
         * alternative is a thread we cannot vouch for). An interrupted syscall must not run
         * from this stop: detaching leaves a spurious pending-signal flag
         * that makes epoll_wait and friends fail with EINTR at once. So it
         * is rewound to run again from its instruction, which is what the
         * kernel's restart does; the restart block is intact (no
         * rt_sigreturn ran), so a sleep goes on with its remaining time. */
        struct inj_regs back = c->saved;

        bool rewound = inj_arch_restart_by_hand(&back.gp, true, c->saved.restart_nr);
        r = inj_arch_restore(c->t->tid, &back);
        restore_sigmask(c);
        if (!r && rewound)
            r = restore_exactly(c);
    } else {
        r = inj_arch_restore(c->t->tid, &c->saved);
        restore_sigmask(c);
    }
    inj_arch_release(&c->saved);
    c->saved_ok = false;
    if (c->t->stop == INJ_STOP_EXITED || r == -ESRCH)
        return inj_err(err, errlen, INJ_EEXITED, "pid %d exited during injection", c->t->pid);
    if (r)
        return inj_err(err, errlen, INJ_EINTERNAL,
                       "restoring the registers of thread %d: %s", c->t->tid, strerror(-r));
    return INJ_OK;
}

