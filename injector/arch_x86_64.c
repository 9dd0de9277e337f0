/* arch_x86_64.c - registers and calls on x86-64 (System V ABI). */
#include "injector/arch.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "injector/mem.h"

/* Larger than any XSAVE area today (AVX-512 ~2.7 KiB, AMX tiles ~11 KiB);
 * the kernel copies min(iov_len, its size) and reports what it wrote. */
#define XSTATE_MAX (64 * 1024)

#define EFLAGS_DF 0x400

/* include/linux/errno.h (kernel-internal, not in uapi). */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

/* Instructions glibc puts between "mov $nr,%eax" and "syscall" that leave
 * %rax alone (futex flags, zeroed arguments, the fourth argument). */
static const struct {
    unsigned char len, bytes[4], any_last; /* any_last: last byte an immediate */
} keeps_rax[] = {
    { 4, { 0x40, 0x80, 0xf6, 0 }, 1 },      /* xor $ib,%sil */
    { 3, { 0x83, 0xe6, 0 }, 1 },            /* and $ib,%esi */
    { 2, { 0x31, 0xd2 }, 0 },               /* xor %edx,%edx */
    { 2, { 0x31, 0xf6 }, 0 },               /* xor %esi,%esi */
    { 3, { 0x45, 0x31, 0xd2 }, 0 },         /* xor %r10d,%r10d */
    { 3, { 0x49, 0x89, 0xca }, 0 },         /* mov %rcx,%r10 */
};

static bool restart_block_user(long nr)
{
    /* The syscalls that leave a restart block (kernel: set_restart_fn). */
    return nr == SYS_nanosleep || nr == SYS_clock_nanosleep || nr == SYS_futex ||
           nr == SYS_poll;
}

long inj_arch_decode_syscall_nr(const unsigned char *code, size_t len)
{
    size_t end;
    uint32_t imm;

    if (len < 2 || code[len - 2] != 0x0f || code[len - 1] != 0x05)
        return -1;
    end = len - 2;
    for (int skipped = 0; skipped <= 2; skipped++) {
        bool matched = false;

        if (end >= 5 && code[end - 5] == 0xb8) {               /* mov $id,%eax */
            memcpy(&imm, code + end - 4, 4);
            return restart_block_user((long)imm) ? (long)imm : -1;
        }
        if (end >= 7 && code[end - 7] == 0x48 && code[end - 6] == 0xc7 &&
            code[end - 5] == 0xc0) {                            /* mov $id,%rax */
            memcpy(&imm, code + end - 4, 4);
            return restart_block_user((long)imm) ? (long)imm : -1;
        }
        for (size_t i = 0; i < sizeof(keeps_rax) / sizeof(keeps_rax[0]) && !matched; i++) {
            size_t n = keeps_rax[i].len, cmp = n - keeps_rax[i].any_last;

            if (end >= n && !memcmp(code + end - n, keeps_rax[i].bytes, cmp)) {
                end -= n;
                matched = true;
            }
        }
        if (!matched)
            return -1;
    }
    return -1;
}

/* A thread stopped in restart_syscall (the kernel's continuation of a sleep
 * it restarted once already, e.g. after an earlier injection): the syscall
 * it continues, read off the code before its syscall instruction, or -1.
 * rt_sigreturn empties the restart block, so a rescue frame must re-issue
 * that syscall itself; restart_syscall would fail with EINTR. */
static long restarted_syscall(pid_t tid, const inj_gregs_t *gp)
{
    unsigned char code[24];

    if ((long long)gp->orig_rax != SYS_restart_syscall ||
        (long long)gp->rax != -ERESTART_RESTARTBLOCK || gp->rip < sizeof(code))
        return -1;
    if (inj_mem_read(tid, gp->rip - sizeof(code), code, sizeof(code)))
        return -1;
    return inj_arch_decode_syscall_nr(code, sizeof(code));
}

int inj_arch_save(pid_t tid, struct inj_regs *regs)
{
    struct iovec iov;

    memset(regs, 0, sizeof(*regs));
    regs->restart_nr = -1;
    if (ptrace(PTRACE_GETREGS, tid, NULL, &regs->gp) == -1)
        return -errno;
    regs->restart_nr = restarted_syscall(tid, &regs->gp);
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

/* Calls whose -EINTR means "a signal is pending" and nothing was done:
 * restarting them is what the program would have seen had we not stopped
 * it (a real signal with a handler still gets EINTR: the kernel turns
 * -ERESTARTNOHAND into EINTR when it runs one). The socket calls return
 * -EINTR instead of restarting only when the socket has SO_RCVTIMEO or
 * SO_SNDTIMEO (net/core/sock.c sock_intr_errno) and only when nothing was
 * transferred; io_uring_enter's wait likewise (io_uring/io_uring.c
 * io_cqring_wait). Not close() (its EINTR may come after the descriptor
 * is gone) nor connect() (restarted, it would say EALREADY where the
 * program expects EINTR). The rest (pipe reads, nanosleep, futex, poll,
 * select, wait4...) come back as -ERESTART* and the kernel restarts them
 * itself. */
const long inj_eintr_waits[] = {
    SYS_io_uring_enter, SYS_recvfrom, SYS_recvmsg, SYS_recvmmsg, SYS_sendto, SYS_sendmsg,
    SYS_sendmmsg, SYS_accept, SYS_accept4, SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
    SYS_epoll_pwait2,
#endif
    SYS_semop, SYS_semtimedop, SYS_rt_sigtimedwait, SYS_io_getevents,
#ifdef SYS_io_pgetevents
    SYS_io_pgetevents,
#endif
    -1,
};

/* The same on a socket only: read/write on other files keep their EINTR. */
const long inj_eintr_socket_io[] = { SYS_read, SYS_readv, SYS_write, SYS_writev, -1 };

static bool in_list(const long *v, long nr)
{
    for (int i = 0; v[i] >= 0; i++)
        if (v[i] == nr)
            return true;
    return false;
}

bool inj_arch_restart_eintr(inj_gregs_t *gp)
{
    if (!in_list(inj_eintr_waits, (long)gp->orig_rax) || (long long)gp->rax != -EINTR)
        return false;
    gp->rax = (unsigned long long)-ERESTARTNOHAND;
    return true;
}

bool inj_arch_restart_eintr_fd(pid_t tid, inj_gregs_t *gp)
{
    char path[64], link[64];
    ssize_t n;

    if (!in_list(inj_eintr_socket_io, (long)gp->orig_rax))
        return false;
    if ((long long)gp->rax != -EINTR || (long long)gp->rdi < 0 || gp->rdi > INT32_MAX)
        return false;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tid, (int)gp->rdi);
    n = readlink(path, link, sizeof(link) - 1);
    if (n <= 0)
        return false;
    link[n] = '\0';
    if (strncmp(link, "socket:[", 8))
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

/* ---- rescue frames ------------------------------------------------------ */

/* The kernel's x86-64 signal frame (uapi asm/sigcontext.h, asm/ucontext.h,
 * arch/x86/kernel/signal_64.c), spelled out because the uapi headers clash
 * with glibc's <signal.h>. */
struct k_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2;
    uint64_t fpstate;          /* user address of the XSAVE/FXSAVE image */
    uint64_t reserved1[8];
};

struct k_stack {
    uint64_t ss_sp;
    int32_t ss_flags;
    int32_t pad;
    uint64_t ss_size;
};

struct k_ucontext {
    uint64_t uc_flags;
    uint64_t uc_link;
    struct k_stack uc_stack;
    struct k_sigcontext uc_mcontext;
    uint64_t uc_sigmask;       /* the kernel's sigset_t: 64 signals */
};

struct k_rt_sigframe {
    uint64_t pretcode;         /* the return address slot */
    struct k_ucontext uc;
    unsigned char info[128];   /* siginfo: not read by rt_sigreturn */
};

_Static_assert(sizeof(struct k_sigcontext) == 256, "struct sigcontext is 256 bytes");
_Static_assert(offsetof(struct k_ucontext, uc_mcontext) == 40, "uc_mcontext at 40");
_Static_assert(sizeof(struct k_ucontext) == 304, "struct ucontext is 304 bytes");

#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define FXSAVE_SIZE 512
#define XSAVE_HDR_SIZE 64
#define SW_BYTES_OFF 464           /* fxregs_state.sw_reserved */
#define XFEATURE_XTILE_DATA 18     /* AMX tiles: enabled per process (XFD) */

long inj_arch_find_restorer(const unsigned char *code, size_t len, size_t *syscall_end)
{
    /* mov $15,%rax; syscall  (glibc, musl)  and  mov $15,%eax; syscall */
    static const unsigned char a[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
    static const unsigned char b[] = { 0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05 };

    for (size_t i = 0; i + sizeof(a) <= len; i++) {
        if (!memcmp(code + i, a, sizeof(a))) {
            *syscall_end = i + sizeof(a);
            return (long)i;
        }
    }
    for (size_t i = 0; i + sizeof(b) <= len; i++) {
        if (!memcmp(code + i, b, sizeof(b))) {
            *syscall_end = i + sizeof(b);
            return (long)i;
        }
    }
    return -1;
}

size_t inj_arch_rescue_stub(unsigned char *buf, size_t *syscall_end)
{
    static const unsigned char stub[] = {
        0x48, 0x89, 0xc7,             /* mov %rax,%rdi */
        0xb8, 0x0f, 0x00, 0x00, 0x00, /* mov $15,%eax (rt_sigreturn) */
        0x0f, 0x05,                   /* syscall: does not return here */
        0x0f, 0x0b,                   /* ud2 */
    };

    memcpy(buf, stub, sizeof(stub));
    *syscall_end = 10;
    return sizeof(stub);
}

uint64_t inj_arch_stub_retval(const inj_gregs_t *gp)
{
    return gp->rdi;
}

long inj_arch_munmap_syscall_at(const unsigned char *code, size_t len)
{
    /* glibc's syscall template (sysdeps/unix/sysv/linux/x86_64/syscall.S's
     * T_PSEUDO), byte for byte but for the errno slot's displacement:
     *   mov $11,%eax; syscall; cmp $-4095,%rax; jae 1f; ret
     *   1: mov errno@gottpoff(%rip),%rcx; neg %eax; mov %eax,%fs:(%rcx);
     *   or $-1,%rax; ret
     * Both ways out are known: success returns at once, failure only sets
     * the thread's errno. Anything else (musl's C wrapper, a far jump to
     * __syscall_error): -1. */
    static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
    static const unsigned char head[] = {
        0xb8, 0x0b, 0x00, 0x00, 0x00,       /* mov $11,%eax */
        0x0f, 0x05,                         /* syscall */
        0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, /* cmp $-4095,%rax */
        0x73, 0x01,                         /* jae +1 */
        0xc3,                               /* ret */
        0x48, 0x8b, 0x0d,                   /* mov disp32(%rip),%rcx */
    };
    static const unsigned char tail[] = {
        0xf7, 0xd8,             /* neg %eax */
        0x64, 0x89, 0x01,       /* mov %eax,%fs:(%rcx) */
        0x48, 0x83, 0xc8, 0xff, /* or $-1,%rax */
        0xc3,                   /* ret */
    };
    size_t at = 0;

    if (len >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)))
        at = sizeof(endbr64);
    if (len < at + sizeof(head) + 4 + sizeof(tail) || memcmp(code + at, head, sizeof(head)) ||
        memcmp(code + at + sizeof(head) + 4, tail, sizeof(tail)))
        return -1;
    return (long)(at + 5);
}

/* Writes the saved registers with rip, rsp and rax replaced, the
 * direction flag clear, no syscall to restart, and args in the function
 * ABI's registers (rdi, rsi, rdx, rcx, r8, r9) or, for a syscall, the
 * kernel's (r10 for the fourth). 0 or -errno. */
static int set_entry_regs(pid_t tid, const struct inj_regs *saved, uint64_t ip, uint64_t sp,
                          uint64_t rax, const uint64_t *args, int nargs, bool syscall_abi)
{
    inj_gregs_t r = saved->gp;
    unsigned long long *slots[6] = { &r.rdi, &r.rsi, &r.rdx, syscall_abi ? &r.r10 : &r.rcx,
                                     &r.r8, &r.r9 };

    if (nargs > 6)
        return -EINVAL;
    r.rip = ip;
    r.rsp = sp;
    r.rax = rax;
    r.eflags &= ~(unsigned long long)EFLAGS_DF;
    r.orig_rax = (unsigned long long)-1;
    for (int i = 0; i < nargs; i++)
        *slots[i] = args[i];
    if (ptrace(PTRACE_SETREGS, tid, NULL, &r) == -1)
        return -errno;
    return 0;
}

int inj_arch_set_syscall(pid_t tid, const struct inj_regs *saved, uint64_t insn, long nr,
                         const uint64_t *args, int nargs, uint64_t sp)
{
    return set_entry_regs(tid, saved, insn, sp, (uint64_t)nr, args, nargs, true);
}

uint64_t inj_arch_unmap_stub_sp(uint64_t slot)
{
    /* slot + 8 is 16-aligned, so slot - 16 + 8 is too: a call's entry. */
    return slot - 16;
}

uint64_t inj_arch_unmap_stub_retval_addr(uint64_t slot)
{
    return slot + offsetof(struct k_rt_sigframe, info);
}

size_t inj_arch_unmap_stub(unsigned char *buf, uint64_t slot, uint64_t page, uint64_t page_len,
                           uint64_t munmap_fn)
{
    /* Entered by `ret` from inj_arch_unmap_stub_sp(slot): %rsp = slot - 8.
     * The value goes above the stack pointer, where neither munmap nor a
     * signal handler run meanwhile writes. At munmap's entry %rsp = slot,
     * its return address is the trampoline there, and slot + 8 (the
     * ucontext) is 16-aligned as a function entry wants. */
    uint32_t disp = (uint32_t)(inj_arch_unmap_stub_retval_addr(slot) - (slot - 8));
    size_t n = 0;

    buf[n++] = 0x48; buf[n++] = 0x89; buf[n++] = 0x84; buf[n++] = 0x24; /* mov %rax,disp(%rsp) */
    memcpy(buf + n, &disp, 4);
    n += 4;
    buf[n++] = 0x48; buf[n++] = 0x8d; buf[n++] = 0x64; buf[n++] = 0x24; /* lea 8(%rsp),%rsp */
    buf[n++] = 0x08;
    buf[n++] = 0x48; buf[n++] = 0xbf;                                   /* movabs $page,%rdi */
    memcpy(buf + n, &page, 8);
    n += 8;
    buf[n++] = 0x48; buf[n++] = 0xbe;                                   /* movabs $len,%rsi */
    memcpy(buf + n, &page_len, 8);
    n += 8;
    buf[n++] = 0x48; buf[n++] = 0xb8;                                   /* movabs $fn,%rax */
    memcpy(buf + n, &munmap_fn, 8);
    n += 8;
    buf[n++] = 0xff; buf[n++] = 0xe0;                                   /* jmp *%rax */
    buf[n++] = 0x0f; buf[n++] = 0x0b;                                   /* ud2 */
    return n;
}

static bool restart_pending(const inj_gregs_t *gp)
{
    long long rax = (long long)gp->rax;

    return (long long)gp->orig_rax >= 0 &&
           (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
            rax == -ERESTART_RESTARTBLOCK);
}

long inj_arch_interrupted_syscall(const inj_gregs_t *gp)
{
    return restart_pending(gp) ? (long)gp->orig_rax : -1;
}

bool inj_arch_restart_uses_block(const inj_gregs_t *gp)
{
    return restart_pending(gp) && (long long)gp->rax == -ERESTART_RESTARTBLOCK;
}

bool inj_arch_restart_by_hand(inj_gregs_t *gp, bool restart_block_intact, long restart_nr)
{
    bool rewind = restart_pending(gp);

    /* Never together with the kernel's restart (orig_rax = -1 below):
     * DESIGN.md "Syscall restart" is about doing both. The syscall
     * instruction is 2 bytes (0f 05). */
    if (rewind) {
        if ((long long)gp->rax == -ERESTART_RESTARTBLOCK && restart_block_intact)
            gp->rax = SYS_restart_syscall;
        else if ((long long)gp->orig_rax == SYS_restart_syscall && restart_nr >= 0)
            gp->rax = (unsigned long long)restart_nr; /* the sleep itself, anew */
        else
            gp->rax = gp->orig_rax;
        gp->rip -= 2;
    }
    gp->orig_rax = (unsigned long long)-1;
    return rewind;
}

/* Bytes of the XSAVE image a signal frame of this process carries: the
 * kernel refuses (falls back to x87/SSE only) a frame that claims more than
 * the process's own size, which leaves out AMX tiles unless it uses them. */
static size_t xsave_frame_size(const unsigned char *x, size_t len, uint64_t *xfeatures)
{
    uint64_t feat, bv;
    size_t end = FXSAVE_SIZE + XSAVE_HDR_SIZE;

    uint32_t magic1;

    memcpy(&magic1, x + SW_BYTES_OFF, sizeof(magic1));
    memcpy(&feat, x + SW_BYTES_OFF + 8, sizeof(feat));
    memcpy(&bv, x + FXSAVE_SIZE, sizeof(bv));
    if (magic1 != FP_XSTATE_MAGIC1) {
        /* The regset carries the kernel's software bytes; should it not,
         * XCR0 names the features the kernel enabled. */
        uint32_t lo, hi;

        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        feat = ((uint64_t)hi << 32) | lo;
    }
    feat |= 3; /* x87 and SSE live in the legacy area */
    if (!(bv & (1ull << XFEATURE_XTILE_DATA)))
        feat &= ~(1ull << XFEATURE_XTILE_DATA);
    for (unsigned b = 2; b < 63; b++) {
        unsigned eax, ebx, ecx, edx;

        if (!(feat & (1ull << b)))
            continue;
        __cpuid_count(0xd, b, eax, ebx, ecx, edx);
        (void)edx;
        if (ecx & 1) /* supervisor state: not in the user image */
            continue;
        if ((size_t)ebx + eax > end)
            end = (size_t)ebx + eax;
    }
    *xfeatures = feat;
    return end < len ? end : len;
}

int inj_arch_rescue_frame(const struct inj_regs *saved, uint64_t sigmask, uint64_t top,
                          unsigned char **image, size_t *len, uint64_t *slot)
{
    const inj_gregs_t *g = &saved->gp;
    struct k_rt_sigframe f;
    size_t fplen, fpsize;
    uint64_t fpaddr, start, xfeatures = 0;
    unsigned char *img;

    if (saved->have_xstate && saved->xstate_len >= FXSAVE_SIZE + XSAVE_HDR_SIZE) {
        fpsize = xsave_frame_size(saved->xstate, saved->xstate_len, &xfeatures);
        fplen = fpsize + 4; /* FP_XSTATE_MAGIC2 follows the image */
    } else if (saved->have_fp) {
        fpsize = fplen = FXSAVE_SIZE;
    } else {
        return -EINVAL;
    }
    fpaddr = (top - fplen) & ~(uint64_t)63; /* XRSTOR needs 64-byte alignment */
    /* slot + 8 (the frame's ucontext) must be 16-aligned: that is the stack
     * pointer a function sees right after its return address was popped. */
    start = ((fpaddr - sizeof(f)) & ~(uint64_t)15) - 8;

    memset(&f, 0, sizeof(f));
    f.uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
    /* An invalid mode makes rt_sigreturn leave the thread's alternate
     * signal stack as it is (restore_altstack ignores the error). */
    f.uc.uc_stack.ss_flags = 7;
    f.uc.uc_sigmask = sigmask;
    struct k_sigcontext *sc = &f.uc.uc_mcontext;
    sc->r8 = g->r8; sc->r9 = g->r9; sc->r10 = g->r10; sc->r11 = g->r11;
    sc->r12 = g->r12; sc->r13 = g->r13; sc->r14 = g->r14; sc->r15 = g->r15;
    sc->rdi = g->rdi; sc->rsi = g->rsi; sc->rbp = g->rbp; sc->rbx = g->rbx;
    sc->rdx = g->rdx; sc->rax = g->rax; sc->rcx = g->rcx; sc->rsp = g->rsp;
    sc->rip = g->rip; sc->eflags = g->eflags;
    sc->cs = (uint16_t)g->cs; sc->ss = (uint16_t)g->ss;
    sc->fs = (uint16_t)g->fs; sc->gs = (uint16_t)g->gs;
    sc->fpstate = fpaddr;
    {
        /* rt_sigreturn sets orig_rax to -1 and resets the restart block. */
        inj_gregs_t r = *g;

        inj_arch_restart_by_hand(&r, false, saved->restart_nr);
        sc->rip = r.rip;
        sc->rax = r.rax;
    }

    *len = (size_t)(fpaddr + fplen - start);
    img = calloc(1, *len);
    if (!img)
        return -ENOMEM;
    memcpy(img, &f, sizeof(f));
    unsigned char *fp = img + (fpaddr - start);
    if (saved->have_xstate && fplen != fpsize) {
        uint32_t magic1 = FP_XSTATE_MAGIC1, ext = (uint32_t)fplen, size = (uint32_t)fpsize,
                 magic2 = FP_XSTATE_MAGIC2;

        memcpy(fp, saved->xstate, fpsize);
        memcpy(fp + SW_BYTES_OFF, &magic1, 4);
        memcpy(fp + SW_BYTES_OFF + 4, &ext, 4);
        memcpy(fp + SW_BYTES_OFF + 8, &xfeatures, 8);
        memcpy(fp + SW_BYTES_OFF + 16, &size, 4);
        memcpy(fp + fpsize, &magic2, 4);
    } else {
        memcpy(fp, &saved->fp, FXSAVE_SIZE);
        memset(fp + SW_BYTES_OFF, 0, FXSAVE_SIZE - SW_BYTES_OFF); /* no magic: FXSAVE only */
    }
    *image = img;
    *slot = start;
    return 0;
}

int inj_arch_set_call(pid_t tid, const struct inj_regs *saved, uint64_t fn,
                      const uint64_t *args, int nargs, uint64_t sp)
{
    /* Registers first: should we die between the two writes, the thread
     * runs the call with the interrupted code's FP state (harmless) rather
     * than the interrupted code with a reset FP state. */
    int r = set_entry_regs(tid, saved, fn, sp, 0, args, nargs, false);

    if (r)
        return r;
    if (saved->have_fp) {
        struct user_fpregs_struct fp = saved->fp;

        fp.cwd = 0x37f;
        fp.swd = 0;
        fp.ftw = 0;
        fp.mxcsr = 0x1f80;
        if (ptrace(PTRACE_SETFPREGS, tid, NULL, &fp) == -1)
            return -errno;
    }
    return 0;
}
