/* ptrace_session.h - holding ONE thread of the target with PTRACE_SEIZE:
 * interrupt, wait, resume, detach, and the signals that arrive meanwhile. */
#ifndef HI_INJECTOR_PTRACE_SESSION_H
#define HI_INJECTOR_PTRACE_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define INJ_MAX_HELD_SIGNALS 32

/* What a wait reported. */
enum inj_stop {
    INJ_STOP_NONE = 0,
    INJ_STOP_EVENT,     /* PTRACE_EVENT_STOP: our interrupt or a group-stop */
    INJ_STOP_SIGNAL,    /* signal-delivery-stop for stop_sig */
    INJ_STOP_SYSCALL,   /* syscall-entry or -exit stop (after inj_thread_resume_syscall) */
    INJ_STOP_EXITED,    /* the thread (process) is gone */
};

struct inj_thread {
    pid_t pid;          /* thread group (process) id */
    pid_t tid;          /* the thread we hold */
    bool seized;        /* we are its tracer */
    bool hold_signals;  /* a call runs: signals are held back, not delivered */
    enum inj_stop stop; /* the stop it is in (valid while not running) */
    int stop_sig;       /* signal of the stop */
    siginfo_t stop_info;/* for INJ_STOP_SIGNAL */
    int exit_status;    /* waitpid status when INJ_STOP_EXITED */
    /* Signals that arrived while hold_signals was set, in arrival order;
     * delivered again by inj_thread_detach(). */
    siginfo_t held[INJ_MAX_HELD_SIGNALS];
    int nheld;
    int dropped;        /* held signals beyond INJ_MAX_HELD_SIGNALS */
    /* The signals the thread blocked when we stopped it, as the kernel
     * applies them (/proc status SigBlk): inside sigsuspend, ppoll,
     * pselect or epoll_pwait that is the call's own temporary mask, which
     * PTRACE_GETSIGMASK does not show. Bit n-1 for signal n. */
    uint64_t wait_blocked;
    bool have_wait_blocked;
    long wait_syscall;  /* the syscall it was stopped in, -1 for none */
};

/* Reads SigBlk of the stopped thread into t->wait_blocked. */
void inj_thread_read_wait_mask(struct inj_thread *t);

/* PTRACE_SEIZE of tid. The only option is PTRACE_O_TRACESYSGOOD (syscall
 * stops are told apart from SIGTRAP): new threads and children stay
 * untraced, and the target does not die with us. Returns 0 or -errno. */
int inj_thread_seize(struct inj_thread *t, pid_t pid, pid_t tid);

/* PTRACE_INTERRUPT and wait until the thread stops, at most timeout_ms.
 * Signals that arrive before the stop are delivered normally (they are
 * not ours to hold: no call runs yet). Returns 0 (t->stop is INJ_STOP_EVENT,
 * or INJ_STOP_SIGNAL when hold_signals is set), -ESRCH when the thread
 * exited, -ETIMEDOUT, or -errno. */
int inj_thread_interrupt(struct inj_thread *t, int timeout_ms);

/* Resumes a stopped thread (PTRACE_CONT, no signal). 0 or -errno. */
int inj_thread_resume(struct inj_thread *t);

/* Resumes it until the next syscall entry or exit (PTRACE_SYSCALL); that
 * stop is reported as INJ_STOP_SYSCALL. 0 or -errno. */
int inj_thread_resume_syscall(struct inj_thread *t);

/* From a syscall stop (or any stop but an event stop), moves the thread
 * into an interrupt stop (PTRACE_EVENT_STOP) before it returns to user
 * mode: PTRACE_INTERRUPT, then PTRACE_CONT, so the syscall it is stopped
 * at runs (or is skipped, orig_rax = -1) and the trap is taken on the way
 * out. There, inside the kernel's signal handling, registers set now are
 * the ones its syscall restart sees. Signal-delivery-stops on the way are
 * held. Returns 0 in an event stop, -EAGAIN in another stop, -ESRCH,
 * -ETIMEDOUT or -errno. */
int inj_thread_park(struct inj_thread *t, int timeout_ms);

/* Waits for the next stop of a running thread, at most timeout_ms (< 0:
 * forever). While hold_signals is set, a signal-delivery-stop is returned
 * to the caller, who decides whether it is its trap or a signal to hold
 * (inj_thread_hold_signal). Otherwise signals are passed through and the
 * wait goes on. Returns 0, -ESRCH (exited), -ETIMEDOUT or -errno. */
int inj_thread_wait(struct inj_thread *t, int timeout_ms);

/* Other threads of this process trace other targets at the same time (the
 * cli attaching to several processes at once): a tracee's stop sends
 * SIGCHLD to the process, and another thread's wait may take it, so waits
 * look again every millisecond instead of sleeping until their own. */
void inj_ptrace_shared_sigchld(bool shared);

/* Records the signal of the current signal-delivery-stop for delivery at
 * detach; the caller resumes the thread without it. */
void inj_thread_hold_signal(struct inj_thread *t);

/* Detaches, delivering held signals: the first one with PTRACE_DETACH when
 * the thread sits in a signal-delivery-stop (its siginfo kept), the others
 * (or all) with rt_tgsigqueueinfo / tgkill afterwards. Always leaves the
 * thread untraced if it still exists. Returns 0 or -errno. */
int inj_thread_detach(struct inj_thread *t);

/* Our stop made a wait like epoll_wait (or recv on a socket with
 * SO_RCVTIMEO) fail with EINTR, which the kernel does on any stop: makes
 * the kernel restart it instead when the thread goes on
 * (inj_arch_restart_eintr, inj_arch_restart_eintr_fd), so the program
 * never sees an EINTR it would not have seen without us. For a thread in
 * a ptrace stop; used by the injection and the census's freeze. Returns
 * the syscall number so restarted, or -1. */
long inj_thread_undo_stop_eintr(pid_t tid);

/* Describes a waitpid exit status ("exited with status 3", "was killed by
 * SIGKILL"). */
void inj_thread_describe_exit(int status, char *buf, size_t len);

#endif /* HI_INJECTOR_PTRACE_SESSION_H */
