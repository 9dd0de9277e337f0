/* hooks_sandbox.c - prctl, seccomp and syscall hooks: the hooks are off
 * before a seccomp filter installed after attach takes effect (issue 25).
 *
 * A thread that installs a filter of its own and allocates right after
 * met our hooks' system calls (gettid, the stack walk's rt_sigprocmask, a
 * lock's sched_yield, an mmap of our tables) under a filter nobody had
 * run them through, before the agent's scan (every 500 ms) or a cli's
 * could see the filter: SIGSYS. The cause is that the filter goes in
 * while the hooks are live. Programs install filters through libc's
 * prctl(PR_SET_SECCOMP, ...) or syscall(SYS_seccomp, ...) (libseccomp's
 * seccomp_load does one or the other, through its own GOT), or a
 * seccomp() some library defines: those slots are hooked too. On a call
 * that installs a filter (or strict mode) the calling thread, before the
 * call and so before any filter of it is in force:
 *   - gets its tid and its Seccomp_filters count (gettid, /proc reads:
 *     no filter yet);
 *   - marks the gate (pl_seccomp_note_sandbox) and stores the key off,
 *     under the start lock (pl_session_seal_hooks): every hook is a plain
 *     forward from its next call on, for good, in every thread;
 *   - waits until no thread is inside a path of the hooks that may make
 *     a system call (pl_busy_drain, 1 s at most: a thread stopped in one
 *     is not waited for longer);
 * then makes the real call. After it, memory stores only (the filter may
 * be in force): a filter of its own that went in (no TSYNC) is written
 * into the gate as the agent's scan would (odd_tid: the cli then puts
 * the slots back from outside and says so); a TSYNC filter reaches the
 * agent's thread too, which seals as before (seccomp_watch.h), and finds
 * the verdict this thread wrote for it (judged before the call, written
 * after it while the agent is held: pl_seccomp_self_verdict). A call
 * that fails leaves the hooks off anyway: dropping samples is the safe
 * side. syscall(SYS_fork) is let through the same way, and its child
 * (the call returned 0 there) marked as a copy (pl_forked_copy: the crash
 * handler then needs no getpid to know it, serve/fatal.c). Any other call
 * (another prctl option, any other syscall number) jumps to the real
 * function at once, with the stack untouched.
 *
 * A filter installed with the raw instruction (inline assembly, a static
 * libseccomp) passes none of our slots: for those a thread's first hooked
 * call, the unsampled path and the sampled one make no system call (the
 * tid from struct pthread, thread.c; the stack's span from struct pthread
 * or the main stack's mapping, so no read of the first walk is checked
 * with rt_sigprocmask, stack_span.c; a contended lock waits in a futex,
 * as glibc's malloc does, not in sched_yield, lock.h), and the agent's
 * scan and the cli's remain. What is left: a walk that leaves the
 * thread's stack (a coroutine's or signal stack, a frame pointer off
 * it) checks those reads with the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/seccomp_gate_calls.h"
#include "payload/interpose/family.h"
#include "payload/record/record.h"
#include "payload/sys/sys.h"

void *pl_sandbox_fwd[PL_MAX_FAMILIES][3];

_Static_assert(sizeof(void *) == 8, "the stubs below index pl_sandbox_fwd by 8-byte steps");

/* What the call before the filter learnt, for the code after it. */
struct sandbox_pending {
    int32_t tid;
    int32_t filters; /* Seccomp_filters before the call; -1 unknown */
    uint32_t own;    /* a filter for this thread only (no TSYNC, or strict mode) */
    uint32_t armed;
    uint32_t held;   /* TSYNC: the agent was seen idle and is held */
    uint32_t judged; /* TSYNC: groups holds what the new filter allows of the agent's calls */
    uint32_t groups;
    uint32_t listener; /* SECCOMP_FILTER_FLAG_NEW_LISTENER: success is a descriptor */
    int8_t bad[HI_GATE_NGROUPS];          /* what it refuses, for the cli's message */
    uint32_t actions[HI_GATE_NGROUPS];
};
static __thread struct sandbox_pending pl_sandbox_pending __attribute__((tls_model("initial-exec")));

/* This thread's Seccomp_filters now, or -1 (no filter of it yet: any call). */
static int own_filters(void)
{
    char buf[2048];
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nSeccomp_filters:");
    if (!p)
        return -1;
    p += 17;
    while (*p == ' ' || *p == '\t')
        p++;
    int v = 0;
    for (; *p >= '0' && *p <= '9' && v < 100000; p++)
        v = v * 10 + (*p - '0');
    return v;
}

/* Whether (func, a0..a3) installs a filter or strict mode; *own: for the
 * calling thread only; *prog: the filter's struct sock_fprog (or 0),
 * *flags: seccomp(2)'s flags. */
static int installs(unsigned func, long a0, long a1, long a2, long a3, int *own, uintptr_t *prog,
                    unsigned long *flags_out)
{
    unsigned long op, flags = 0;
    *own = 1;
    *prog = 0;
    *flags_out = 0;
    switch (func) {
    case 0: /* prctl(option, mode, ...): never TSYNC */
        return a0 == PR_SET_SECCOMP && (a1 == SECCOMP_MODE_STRICT || a1 == SECCOMP_MODE_FILTER);
    case 1: /* seccomp(op, flags, args) */
        op = (unsigned long)a0;
        flags = (unsigned long)a1;
        *prog = (uintptr_t)a2;
        break;
    default: /* syscall(nr, ...) */
        if (a0 == SYS_prctl)
            return a1 == PR_SET_SECCOMP && (a2 == SECCOMP_MODE_STRICT || a2 == SECCOMP_MODE_FILTER);
        if (a0 != SYS_seccomp)
            return 0;
        op = (unsigned long)a1;
        flags = (unsigned long)a2;
        *prog = (uintptr_t)a3;
        break;
    }
    if (op != SECCOMP_SET_MODE_STRICT && op != SECCOMP_SET_MODE_FILTER)
        return 0;
    *own = !(op == SECCOMP_SET_MODE_FILTER && (flags & SECCOMP_FILTER_FLAG_TSYNC));
    *flags_out = flags;
    if (op != SECCOMP_SET_MODE_FILTER)
        *prog = 0;
    return 1;
}

/* What the filter about to go in allows of the agent's calls
 * (common/seccomp_gate_calls.h), into *groups; false when it cannot be
 * read (the kernel will refuse it with EFAULT or EINVAL then). Before the
 * call: the readability checks are system calls the filters in force
 * were shown to allow (the stack walk makes them). */
static bool judge_filter(uintptr_t at, struct sandbox_pending *s)
{
    struct sock_fprog fp;
    if (!at || !pl_mem_readable(at) || !pl_mem_readable(at + sizeof(fp) - 8))
        return false;
    memcpy(&fp, (const void *)at, sizeof(fp));
    uintptr_t insns = (uintptr_t)fp.filter;
    size_t bytes = (size_t)fp.len * sizeof(struct sock_filter);
    if (fp.len == 0 || fp.len > HI_SECCOMP_MAX_INSNS || !insns || insns + bytes < insns)
        return false;
    for (uintptr_t p = insns; p < insns + bytes; p = (p | 4095u) + 1)
        if (!pl_mem_readable(p < insns + bytes - 8 ? p : insns + bytes - 8))
            return false;
    if (!pl_mem_readable(insns + bytes - 8))
        return false;
    s->groups = hi_gate_groups_allowed(fp.filter, fp.len, s->bad, s->actions);
    return true;
}

int pl_sandbox_before(unsigned func, long a0, long a1, long a2, long a3) __attribute__((used));
void pl_sandbox_after(long ret) __attribute__((used));

/* Before the real call: 1 when it installs a filter (the stub then calls
 * pl_sandbox_after with its result), else 0. */
int pl_sandbox_before(unsigned func, long a0, long a1, long a2, long a3)
{
    int own;
    uintptr_t prog;
    unsigned long flags;
    if (func == 2 && a0 == SYS_fork) { /* the child is told after the call */
        pl_sandbox_pending.armed = 2;
        return 1;
    }
    if (!installs(func, a0, a1, a2, a3, &own, &prog, &flags))
        return 0;
    int saved_errno = errno;
    struct pl_tls *t = &pl_tls;
    int nested = t->guard != 0; /* a handler that ran inside the payload */
    uint64_t k = nested ? 0 : pl_guard_enter(t); /* our own calls here forward */
    struct sandbox_pending *s = &pl_sandbox_pending;
    s->tid = (int32_t)syscall(SYS_gettid);
    s->filters = own_filters();
    s->own = (uint32_t)own;
    pl_session_seal_hooks(s->tid, (int)pl_raw_getpid());
    pl_busy_drain(1000000000ull);
    /* A TSYNC filter lands on the agent's thread too: not between its
     * look at its status and a /proc read after it; and what it allows
     * of the agent's calls is known here, before it is in force. */
    s->held = s->judged = 0;
    s->listener = (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0;
    if (!own) {
        s->judged = judge_filter(prog, s);
        s->held = pl_seccomp_hold_agent(1000000000ull);
    }
    s->armed = 1;
    if (!nested)
        pl_guard_leave(t, k); /* a stale key: the next call takes the slow path and forwards */
    errno = saved_errno;
    return 1;
}

/* After it: memory only, the filter may be in force. */
void pl_sandbox_after(long ret)
{
    struct sandbox_pending *s = &pl_sandbox_pending;
    if (!s->armed)
        return;
    if (s->armed == 2) { /* syscall(SYS_fork): 0 in the child */
        s->armed = 0;
        if (ret == 0)
            __atomic_store_n(&pl_forked_copy, 1, __ATOMIC_RELAXED);
        return;
    }
    s->armed = 0;
    /* In: 0, or a listener's descriptor. With TSYNC a failure may be
     * a thread id (the thread that could not be synchronised): no filter
     * went in then, unless it is a listener's descriptor (the kernel
     * takes both flags only with TSYNC_ESRCH, which answers -ESRCH). */
    bool in = ret == 0 || (s->listener && ret > 0);
    if (!s->own) { /* a TSYNC filter: the agent was held, and is told before it goes on */
        if (in && s->held && s->judged)
            pl_seccomp_self_verdict(s->filters, s->groups, s->bad, s->actions);
        pl_seccomp_release_agent();
    }
    if (ret == 0 && s->own)
        pl_seccomp_note_own_filter(s->tid, s->filters >= 0 ? s->filters + 1 : -1);
}

#if defined(__x86_64__)
/* TEST: the quick test of the first arguments, in registers; a call that
 * may install a filter goes to the slow part, any other jumps to the
 * original at once (the caller's stack and registers as they came).
 * Slow part: the argument registers (and %al, a variadic call's count of
 * vector registers) are kept across pl_sandbox_before; on 1 the original
 * is called from here (prctl and syscall take at most 6 register words:
 * nothing on the stack for an install) and pl_sandbox_after gets its
 * result, which is returned; on 0 the original is jumped to. The stack is
 * 16-byte aligned at each call (8 at entry, rbp and 8 more pushes). */
#define PL_SANDBOX_STUB(NAME, FUNC, OFF, TEST)                                                    \
    __asm__("  .text\n"                                                                           \
            "  .p2align 4\n"                                                                      \
            "  .type " NAME ", @function\n" NAME ":\n"                                            \
            "  endbr64\n"                                                                         \
            TEST                                                                                  \
            "  pushq %rbp\n"                                                                      \
            "  movq %rsp, %rbp\n"                                                                 \
            "  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n"                            \
            "  pushq %r8\n  pushq %r9\n  pushq %rax\n  pushq %rax\n"                              \
            "  movq %rcx, %r8\n"                                                                  \
            "  movq %rdx, %rcx\n"                                                                 \
            "  movq %rsi, %rdx\n"                                                                 \
            "  movq %rdi, %rsi\n"                                                                 \
            "  movl $" FUNC ", %edi\n"                                                            \
            "  call pl_sandbox_before\n"                                                          \
            "  movl %eax, %r11d\n"                                                                \
            "  popq %rax\n  popq %rax\n  popq %r9\n  popq %r8\n"                                  \
            "  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n"                                \
            "  testl %r11d, %r11d\n"                                                              \
            "  jz 2f\n"                                                                           \
            "  call *pl_sandbox_fwd+" OFF "(%rip)\n"                                              \
            "  pushq %rax\n  pushq %rax\n"                                                        \
            "  movq %rax, %rdi\n"                                                                 \
            "  call pl_sandbox_after\n"                                                           \
            "  popq %rax\n  popq %rax\n"                                                          \
            "  popq %rbp\n"                                                                       \
            "  ret\n"                                                                             \
            "2:\n"                                                                                \
            "  popq %rbp\n"                                                                       \
            "1:\n"                                                                                \
            "  jmp *pl_sandbox_fwd+" OFF "(%rip)\n"                                               \
            "  .size " NAME ", .-" NAME "\n");

/* prctl: option PR_SET_SECCOMP (22) only. */
#define TEST_PRCTL "  cmpl $22, %edi\n  jne 1f\n"
/* seccomp: op SECCOMP_SET_MODE_STRICT (0) or _FILTER (1) only. */
#define TEST_SECCOMP "  cmpl $1, %edi\n  ja 1f\n"
/* syscall: SYS_seccomp (317), SYS_fork (57: its child is marked, for the
 * crash handler), or SYS_prctl (157) with PR_SET_SECCOMP. */
#define TEST_SYSCALL                                                                              \
    "  cmpq $317, %rdi\n  je 3f\n  cmpq $57, %rdi\n  je 3f\n  cmpq $157, %rdi\n  jne 1f\n"            \
    "  cmpl $22, %esi\n  jne 1f\n3:\n"

_Static_assert(SYS_seccomp == 317 && SYS_prctl == 157 && PR_SET_SECCOMP == 22 && SYS_fork == 57,
               "the stubs' numbers");
_Static_assert(SECCOMP_SET_MODE_STRICT == 0 && SECCOMP_SET_MODE_FILTER == 1, "the stubs' numbers");

#define PL_SANDBOX_FAMILY(F, O0, O1, O2)                                                          \
    PL_SANDBOX_STUB("pl_hook_prctl_" #F, "0", O0, TEST_PRCTL)                                     \
    PL_SANDBOX_STUB("pl_hook_seccomp_" #F, "1", O1, TEST_SECCOMP)                                 \
    PL_SANDBOX_STUB("pl_hook_syscall_" #F, "2", O2, TEST_SYSCALL)

PL_SANDBOX_FAMILY(0, "0", "8", "16")
PL_SANDBOX_FAMILY(1, "24", "32", "40")
PL_SANDBOX_FAMILY(2, "48", "56", "64")
PL_SANDBOX_FAMILY(3, "72", "80", "88")

_Static_assert(PL_MAX_FAMILIES == 4, "one set of stubs per family");

void pl_hook_prctl_0(void), pl_hook_seccomp_0(void), pl_hook_syscall_0(void);
void pl_hook_prctl_1(void), pl_hook_seccomp_1(void), pl_hook_syscall_1(void);
void pl_hook_prctl_2(void), pl_hook_seccomp_2(void), pl_hook_syscall_2(void);
void pl_hook_prctl_3(void), pl_hook_seccomp_3(void), pl_hook_syscall_3(void);

static void (*const pl_sandbox_hooks[PL_MAX_FAMILIES][3])(void) = {
    { pl_hook_prctl_0, pl_hook_seccomp_0, pl_hook_syscall_0 },
    { pl_hook_prctl_1, pl_hook_seccomp_1, pl_hook_syscall_1 },
    { pl_hook_prctl_2, pl_hook_seccomp_2, pl_hook_syscall_2 },
    { pl_hook_prctl_3, pl_hook_seccomp_3, pl_hook_syscall_3 },
};

uintptr_t pl_hook_sandbox_addr(int family, unsigned func)
{
    if (!pl_func_is_sandbox(func))
        return 0;
    return (uintptr_t)pl_sandbox_hooks[family][func - PL_F_PRCTL];
}
#else
/* Other architectures: no stub yet, the slots are left alone. */
uintptr_t pl_hook_sandbox_addr(int family, unsigned func)
{
    (void)family;
    (void)func;
    return 0;
}
#endif
