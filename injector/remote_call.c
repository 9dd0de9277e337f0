/* remote_call.c - calling a function inside the target on a held thread.
 *
 * The thread is in a ptrace-stop. We save every register (general, x87/SSE/
 * AVX via XSAVE) and its signal mask, point rip at the function with the
 * stack below the red zone and a return address that faults, resume, and
 * wait for the fault. Then the saved registers go back unchanged: when the
 * thread had been interrupted in a syscall, rax = -ERESTART* and orig_rax =
 * the syscall number, and the kernel restarts the syscall on resume (we
 * never move rip ourselves, see DESIGN.md "Syscall restart"). */
#include "injector/remote_call.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "injector/inject.h"
#include "injector/log.h"
#include "injector/mem.h"

/* Bound on the strings placed on the thread's stack. */
#define SCRATCH_MAX (64 * 1024)

/* Poll interval for "still waiting" progress lines during a long call. */
#define CALL_PROGRESS_MS 5000

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

    if (c->scratch_top - c->scratch_lo + len > SCRATCH_MAX)
        return inj_err(err, errlen, INJ_EINTERNAL,
                       "strings for the target exceed %d bytes", SCRATCH_MAX);
    at = (c->scratch_lo - len) & ~(uint64_t)7;
    r = inj_mem_write(c->t->tid, at, s, len);
    if (r)
        return inj_err(err, errlen, r == -ESRCH ? INJ_EEXITED : INJ_EINTERNAL,
                       "writing %zu bytes to the stack of thread %d at 0x%llx: %s", len,
                       c->t->tid, (unsigned long long)at, strerror(-r));
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

static int exited(struct inj_call *c, char *err, size_t errlen, const char *what)
{
    char how[96];

    inj_thread_describe_exit(c->t->exit_status, how, sizeof(how));
    return inj_err(err, errlen, INJ_EEXITED, "pid %d %s during the call to %s()",
                   c->t->pid, c->t->exit_status ? how : "exited", what);
}

int inj_call_run(struct inj_call *c, const char *what, uint64_t fn, const uint64_t *args,
                 int nargs, uint64_t *ret, char *err, size_t errlen)
{
    struct inj_thread *t = c->t;
    uint64_t call_sp, sigmask;
    int r, waited = 0;

    c->crashed = false;
    /* The return trap is a SIGSEGV: the kernel would force-unblock it and
     * reset a blocked SIGSEGV's handler to the default, so unblock it
     * ourselves for the call (inj_call_end restores the mask). */
    if (c->have_sigmask && (c->sigmask & (1ULL << (SIGSEGV - 1)))) {
        sigmask = c->sigmask & ~(1ULL << (SIGSEGV - 1));
        ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(sigmask), &sigmask);
    }
    r = inj_arch_start_call(t->tid, &c->saved, fn, args, nargs, c->scratch_lo, &call_sp);
    if (r == -ESRCH)
        return exited(c, err, errlen, what);
    if (r)
        return inj_err(err, errlen, INJ_EINTERNAL, "setting up the call to %s() in thread %d: %s",
                       what, t->tid, strerror(-r));
    t->hold_signals = true;
    r = inj_thread_resume(t);
    while (r == 0) {
        r = inj_thread_wait(t, CALL_PROGRESS_MS);
        if (r == -ETIMEDOUT) {
            waited += CALL_PROGRESS_MS / 1000;
            inj_log(c->verbose, "still waiting for %s() in thread %d (%d s)", what, t->tid, waited);
            r = 0;
            continue;
        }
        if (r)
            break;
        if (t->stop == INJ_STOP_EVENT) {
            /* A group-stop (SIGSTOP to another thread) or a stray trap:
             * the call must finish first; the stop signal itself is held. */
            r = inj_thread_resume(t);
            continue;
        }
        /* A signal-delivery-stop: our trap, a seccomp kill, a fault, or a
         * signal for the target that waits until we are done. */
        if (t->stop_sig == SIGSEGV && t->stop_info.si_code > 0) {
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
        if (t->stop_sig == SIGSYS && t->stop_info.si_code > 0) {
            /* SECCOMP_RET_TRAP: the syscall was not run. Make it fail with
             * ENOSYS so the call unwinds cleanly (dlopen releases its locks
             * and reports an error) instead of being abandoned midway. */
            if (c->seccomp_syscall < 0)
                c->seccomp_syscall = t->stop_info.si_syscall;
            inj_log(c->verbose, "seccomp filter trapped syscall %d in %s(); failing it with ENOSYS",
                    t->stop_info.si_syscall, what);
            r = inj_arch_fail_syscall(t->tid, ENOSYS);
            if (r == 0)
                r = inj_thread_resume(t);
            continue;
        }
        if (is_fault(&t->stop_info)) {
            inj_gregs_t now;
            int sig = t->stop_sig;

            memset(&now, 0, sizeof(now));
            ptrace(PTRACE_GETREGS, t->tid, NULL, &now);
            c->crashed = true;
            t->hold_signals = false;
            return inj_err(err, errlen, INJ_EINTERNAL,
                           "%s() faulted in pid %d with %s at pc 0x%llx (address %p); the "
                           "thread was restored and the signal suppressed",
                           what, t->pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal",
                           (unsigned long long)inj_arch_ip(&now), t->stop_info.si_addr);
        }
        inj_log(c->verbose, "holding signal %d for thread %d until the call is done",
                t->stop_sig, t->tid);
        inj_thread_hold_signal(t);
        r = inj_thread_resume(t);
    }
    t->hold_signals = false;
    if (r == -ESRCH)
        return exited(c, err, errlen, what);
    return inj_err(err, errlen, INJ_EINTERNAL, "waiting for %s() in thread %d: %s", what,
                   t->tid, strerror(-r));
}

int inj_call_end(struct inj_call *c, char *err, size_t errlen)
{
    int r = 0;

    if (!c->saved_ok)
        return INJ_OK;
    if (c->t->stop != INJ_STOP_EXITED) {
        r = inj_arch_restore(c->t->tid, &c->saved);
        if (c->have_sigmask)
            ptrace(PTRACE_SETSIGMASK, c->t->tid, (void *)sizeof(c->sigmask), &c->sigmask);
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
