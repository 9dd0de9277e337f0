/* remote_call.h - calling a function inside the target on a held thread,
 * with every register saved before and restored after. */
#ifndef HI_INJECTOR_REMOTE_CALL_H
#define HI_INJECTOR_REMOTE_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "injector/arch.h"
#include "injector/ptrace_session.h"

struct inj_call {
    struct inj_thread *t;     /* the held thread (stopped), not owned */
    struct inj_regs saved;    /* its registers when we took it */
    bool saved_ok;
    uint64_t sigmask;         /* its signal mask (restored by inj_call_end) */
    bool have_sigmask;
    uint64_t scratch_top;     /* below the red zone: strings go under here */
    uint64_t scratch_lo;      /* lowest byte used so far */
    int seccomp_syscall;      /* syscall number of a SIGSYS during a call, or -1 */
    bool crashed;             /* the last call faulted (registers were restored) */
    bool verbose;
};

/* Saves the stopped thread's registers and signal mask. On failure nothing
 * was changed. Returns INJ_OK or an enum inj_error with err set. */
int inj_call_begin(struct inj_call *c, struct inj_thread *t, bool verbose, char *err,
                   size_t errlen);

/* Copies a NUL-terminated string below the red zone of the thread's stack
 * (the calls run further below). Returns INJ_OK with its address. */
int inj_call_put_string(struct inj_call *c, const char *s, uint64_t *addr, char *err,
                        size_t errlen);

/* Calls fn(args...) in the thread and waits for it to return to the trap
 * address; what names the function in messages. Signals that arrive
 * meanwhile are held for delivery at detach; a seccomp SIGSYS makes the
 * filtered syscall fail with ENOSYS and sets seccomp_syscall; a fault in the
 * call puts the saved registers back and fails. Returns INJ_OK with the
 * return register in *ret, INJ_EEXITED, or INJ_EINTERNAL. */
int inj_call_run(struct inj_call *c, const char *what, uint64_t fn, const uint64_t *args,
                 int nargs, uint64_t *ret, char *err, size_t errlen);

/* Restores the registers and the signal mask saved by inj_call_begin.
 * Returns INJ_OK, INJ_EEXITED or INJ_EINTERNAL. Frees the saved state. */
int inj_call_end(struct inj_call *c, char *err, size_t errlen);

#endif /* HI_INJECTOR_REMOTE_CALL_H */
