/* remote_call.h - calling a function inside the target on a held thread,
 * with every register saved before and restored after. */
#ifndef HI_INJECTOR_REMOTE_CALL_H
#define HI_INJECTOR_REMOTE_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "injector/arch.h"
#include "injector/libc.h"
#include "injector/maps.h"
#include "injector/ptrace_session.h"

/* Where the held thread is between calls. */
enum inj_call_at {
    INJ_AT_START = 0,   /* the stop we took it in, registers untouched */
    INJ_AT_TRAP,        /* a signal-delivery-stop (return trap, fault) */
    INJ_AT_ENTRY,       /* the entry of a rescue frame's rt_sigreturn */
    INJ_AT_EXIT,        /* just after that rt_sigreturn ran: registers restored */
    INJ_AT_UNMAP,       /* self-unmapping rescue page: stopped at the stub's
                           munmap entry, or at our mmap's exit with the
                           registers of a call munmap(page) that returns to
                           the trampoline. Should we die, the page goes and
                           the thread restores itself. */
};

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
    enum inj_call_at at;

    /* Rescue mode (inj_call_enable_rescue): calls return through a signal
     * frame holding the saved registers, so that the thread restores itself
     * if we die; we catch it at the frame's rt_sigreturn (PTRACE_SYSCALL). */
    bool rescue;
    bool sigreturn_runs;      /* the thread has a seccomp filter: let each
                                 rt_sigreturn run instead of skipping it */
    bool self_unmap;          /* no filter, or filters that allow munmap:
                                 the return stub unmaps the page itself on
                                 its way to rt_sigreturn (only a live
                                 injector skips that munmap, or under a
                                 filter defuses it), so a dead injector
                                 leaves no page behind */
    uint64_t restorer;        /* the C library's sigreturn trampoline */
    uint64_t restorer_ret;    /* address just past its syscall */
    uint64_t frame;           /* the frame's return slot = stack pointer of calls */
    uint64_t page, page_len;  /* our mapping: return stub, then the strings */
    uint64_t stub_ret;        /* address just past the stub's syscall (!self_unmap) */
    uint64_t str_lo;          /* strings grow down from the page's end */
    uint64_t munmap_fn;
    uint64_t munmap_syscall;  /* the syscall instruction inside munmap_fn
                                 when it is glibc's bare wrapper (0: not):
                                 the rescue page's mmap starts there, so
                                 that a dead injector leaves no page even
                                 from inside that mmap */
};

/* Saves the stopped thread's registers and signal mask. On failure nothing
 * was changed. Returns INJ_OK or an enum inj_error with err set. */
int inj_call_begin(struct inj_call *c, struct inj_thread *t, bool verbose, char *err,
                   size_t errlen);

/* Switches c to rescue mode when the kernel and the target allow it (else
 * calls keep returning to the trap address, and verbose says why): writes
 * the signal frame below the red zone, maps a page for the return stub with
 * a call to the target's mmap, and leaves the thread stopped. Returns INJ_OK
 * (also when it fell back), INJ_EEXITED or INJ_EINTERNAL; a seccomp filter
 * that traps mmap shows as c->seccomp_syscall >= 0 with INJ_OK. */
int inj_call_enable_rescue(struct inj_call *c, const struct inj_maps *maps,
                           const struct inj_libc *libc, char *err, size_t errlen);

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

/* Restores the registers and the signal mask saved by inj_call_begin
 * (first unmapping the rescue page, if any). Returns INJ_OK, INJ_EEXITED or
 * INJ_EINTERNAL. Frees the saved state. The thread stays stopped: detach. */
int inj_call_end(struct inj_call *c, char *err, size_t errlen);

#endif /* HI_INJECTOR_REMOTE_CALL_H */
