/* arch_x86_64.c - registers and calls on x86-64 (System V ABI). */
#include "injector/arch.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "injector/mem.h"

/* Larger than any XSAVE area today (AVX-512 ~2.7 KiB, AMX tiles ~11 KiB);
 * the kernel copies min(iov_len, its size) and reports what it wrote. */
#define XSTATE_MAX (64 * 1024)

#define EFLAGS_DF 0x400

int inj_arch_save(pid_t tid, struct inj_regs *regs)
{
    struct iovec iov;

    memset(regs, 0, sizeof(*regs));
    if (ptrace(PTRACE_GETREGS, tid, NULL, &regs->gp) == -1)
        return -errno;
    regs->xstate = malloc(XSTATE_MAX);
    if (!regs->xstate)
        return -ENOMEM;
    iov.iov_base = regs->xstate;
    iov.iov_len = XSTATE_MAX;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
        regs->xstate_len = iov.iov_len;
        regs->have_xstate = true;
    } else {
        /* No XSAVE (very old CPU or kernel): x87 + SSE only. */
        free(regs->xstate);
        regs->xstate = NULL;
    }
    if (ptrace(PTRACE_GETFPREGS, tid, NULL, &regs->fp) == 0)
        regs->have_fp = true;
    if (!regs->have_xstate && !regs->have_fp)
        return -errno;
    return 0;
}

int inj_arch_restore(pid_t tid, const struct inj_regs *regs)
{
    int err = 0;

    if (regs->have_xstate) {
        struct iovec iov = { regs->xstate, regs->xstate_len };

        if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == -1)
            err = -errno;
    }
    if ((!regs->have_xstate || err) && regs->have_fp) {
        err = 0;
        if (ptrace(PTRACE_SETFPREGS, tid, NULL, &regs->fp) == -1)
            err = -errno;
    }
    /* General registers last and always, even if the FP state failed: rip,
     * rsp, rax and orig_rax are what keep the thread alive and make the
     * kernel restart an interrupted syscall. */
    if (ptrace(PTRACE_SETREGS, tid, NULL, &regs->gp) == -1)
        return -errno;
    return err;
}

void inj_arch_release(struct inj_regs *regs)
{
    free(regs->xstate);
    regs->xstate = NULL;
}

uint64_t inj_arch_sp(const inj_gregs_t *gp)
{
    return gp->rsp;
}

uint64_t inj_arch_ip(const inj_gregs_t *gp)
{
    return gp->rip;
}

int inj_arch_start_call(pid_t tid, const struct inj_regs *saved, uint64_t fn,
                        const uint64_t *args, int nargs, uint64_t stack_limit,
                        uint64_t *call_sp)
{
    inj_gregs_t r = saved->gp;
    uint64_t ret = INJ_ARCH_TRAP_ADDR, sp;
    int err;

    if (nargs > 6)
        return -EINVAL;
    /* At function entry (rsp + 8) must be a multiple of 16: align, then
     * "push" the return address. */
    sp = (stack_limit & ~(uint64_t)15) - 8;
    err = inj_mem_write(tid, sp, &ret, sizeof(ret));
    if (err)
        return err;
    if (saved->have_fp) {
        /* The interrupted code may be in the middle of x87 work (full
         * register stack) or run with odd rounding; the callee may assume the
         * ABI's entry state. The saved state is put back afterwards. */
        struct user_fpregs_struct fp = saved->fp;

        fp.cwd = 0x37f;
        fp.swd = 0;
        fp.ftw = 0;         /* abridged tag word: all registers empty */
        fp.mxcsr = 0x1f80;
        if (ptrace(PTRACE_SETFPREGS, tid, NULL, &fp) == -1)
            return -errno;
    }
    r.rip = fn;
    r.rsp = sp;
    r.rax = 0;                 /* no vector arguments (matters for varargs) */
    r.eflags &= ~(unsigned long long)EFLAGS_DF;  /* the ABI wants DF clear */
    /* orig_rax >= 0 with rax = -ERESTART* would make the kernel rewind rip
     * and re-run the interrupted syscall instead of our function. */
    r.orig_rax = (unsigned long long)-1;
    {
        unsigned long long *slots[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };

        for (int i = 0; i < nargs; i++)
            *slots[i] = args[i];
    }
    if (ptrace(PTRACE_SETREGS, tid, NULL, &r) == -1)
        return -errno;
    *call_sp = sp;
    return 0;
}

bool inj_arch_returned(const inj_gregs_t *gp, uint64_t call_sp)
{
    /* `ret` popped our return address: rip is the trap address and rsp is
     * just above the slot we wrote. */
    return gp->rip == INJ_ARCH_TRAP_ADDR && gp->rsp == call_sp + 8;
}

uint64_t inj_arch_retval(const inj_gregs_t *gp)
{
    return gp->rax;
}

/* include/linux/errno.h (kernel-internal, not in uapi). */
#define ERESTARTNOHAND 514

bool inj_arch_restart_eintr(inj_gregs_t *gp)
{
    /* Only pure waits: restarting them is what the program would have seen
     * had we not stopped it. Not close(), connect() or sockets with
     * SO_RCVTIMEO, whose EINTR may mean something happened. */
    switch ((long long)gp->orig_rax) {
    case SYS_epoll_wait:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
    case SYS_semop:
    case SYS_semtimedop:
    case SYS_rt_sigtimedwait:
    case SYS_io_getevents:
#ifdef SYS_io_pgetevents
    case SYS_io_pgetevents:
#endif
        break;
    default:
        return false;
    }
    if ((long long)gp->rax != -EINTR)
        return false;
    gp->rax = (unsigned long long)-ERESTARTNOHAND;
    return true;
}

int inj_arch_fail_syscall(pid_t tid, int err)
{
    inj_gregs_t r;

    if (ptrace(PTRACE_GETREGS, tid, NULL, &r) == -1)
        return -errno;
    r.rax = (unsigned long long)(long long)-err;
    if (ptrace(PTRACE_SETREGS, tid, NULL, &r) == -1)
        return -errno;
    return 0;
}
