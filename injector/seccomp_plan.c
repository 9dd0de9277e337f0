/* seccomp_plan.c - every system call an injection makes, checked against
 * the target thread's seccomp filters before the first one is made.
 *
 * A filter that kills on socket(2) used to kill the target inside
 * heapinject_start (KILL_PROCESS), or its main thread (KILL_THREAD, and
 * the cli waited 40 s). The list below is what loading a library and
 * starting the profiler call, read from `perf trace` of a session
 * (tests/e2e/rel_seccomp_actions.sh checks each), with the arguments they
 * are made with where a filter might test them (socket's family, mmap's
 * and mprotect's protections, clone's flags). Pointers and descriptors
 * are unknown to us: a filter that compares them is evaluated with 0,
 * and one that reads the instruction pointer is not trusted
 * (seccomp_eval.c answers KILL for it), so the plan errs on refusing.
 *
 * Refusals the code copes with are not refusals: clone3 answered with
 * ENOSYS (or TRACE with no tracer, which is ENOSYS) makes glibc fall back
 * to clone; pidfd_open failing leaves the time-to-live as the safety net;
 * libunwind's pipe2/mincore probes (pipe2 is never made when libunwind
 * came with the payload: payload/leave.c) only make a stack without
 * unwind rules end where libunwind would have guessed on;
 * mkdir and chmod of an existing socket directory may fail. */
#include "injector/seccomp_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "injector/error.h"
#include "injector/log.h"
#include "injector/seccomp_eval.h"
#include "injector/target.h"

enum tolerate {
    TOL_NONE,    /* must run */
    TOL_ERRNO,   /* any failure is handled */
    TOL_ENOSYS,  /* ENOSYS is handled (glibc falls back) */
};

struct need {
    long nr;
    const char *name;
    const char *purpose;
    uint64_t args[6];
    enum tolerate tol;
    bool profiler;       /* only when starting the profiler */
};

#define CLONE_THREAD_FLAGS                                                                          \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |            \
     CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static const struct need needs[] = {
    /* The injector's own calls and dlopen. */
    { SYS_mmap, "mmap", "the injector's rescue page and loading the library (anonymous)",
      { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 }, TOL_NONE, false },
    { SYS_mmap, "mmap", "loading the library (code)",
      { 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_DENYWRITE, 3, 0 }, TOL_NONE, false },
    { SYS_mmap, "mmap", "loading the library (data)",
      { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE, 3, 0 }, TOL_NONE, false },
    { SYS_mmap, "mmap", "loading the library (read-only segments)",
      { 0, 4096, PROT_READ, MAP_PRIVATE | MAP_DENYWRITE, 3, 0 }, TOL_NONE, false },
    { SYS_mprotect, "mprotect", "loading the library (RELRO)", { 0, 4096, PROT_READ }, TOL_NONE, false },
    { SYS_mprotect, "mprotect", "loading the library", { 0, 4096, PROT_NONE }, TOL_NONE, false },
    /* ERRNO: the page stays, documented (rel_seccomp deny-munmap). */
    { SYS_munmap, "munmap", "the injector's rescue page", { 0, 4096 }, TOL_ERRNO, false },
    { SYS_openat, "openat", "loading the library", { (uint64_t)AT_FDCWD, 0, O_RDONLY | O_CLOEXEC }, TOL_NONE, false },
    { SYS_read, "read", "loading the library", { 3, 0, 832 }, TOL_NONE, false },
    { SYS_newfstatat, "newfstatat", "loading the library", { 3, 0, 0, AT_EMPTY_PATH }, TOL_NONE, false },
    { SYS_close, "close", "loading the library", { 3 }, TOL_NONE, false },
    { SYS_brk, "brk", "malloc in the dynamic linker", { 0 }, TOL_NONE, false },
    { SYS_rt_sigprocmask, "rt_sigprocmask", "the injected calls", { SIG_BLOCK, 0, 0, 8 }, TOL_NONE, false },
    { SYS_rt_sigprocmask, "rt_sigprocmask", "the injected calls", { SIG_SETMASK, 0, 0, 8 }, TOL_NONE, false },
    /* heapinject_start and its agent thread. */
    { SYS_socket, "socket", "the profiler's unix socket",
      { AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0 }, TOL_NONE, true },
    { SYS_bind, "bind", "the profiler's unix socket", { 3 }, TOL_NONE, true },
    { SYS_listen, "listen", "the profiler's unix socket", { 3, 8 }, TOL_NONE, true },
    { SYS_accept4, "accept4", "the profiler's unix socket", { 3, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK }, TOL_NONE, true },
    { SYS_getsockopt, "getsockopt", "checking who connects (SO_PEERCRED)", { 3, SOL_SOCKET, SO_PEERCRED }, TOL_NONE, true },
    { SYS_sendto, "sendto", "answering the cli", { 3 }, TOL_NONE, true },
    { SYS_recvfrom, "recvfrom", "reading the cli's requests", { 3 }, TOL_NONE, true },
    { SYS_write, "write", "answering the cli", { 3 }, TOL_NONE, true },
    { SYS_poll, "poll", "the agent thread's wait", { 0, 1, 100 }, TOL_NONE, true },
    { SYS_ppoll, "ppoll", "the agent thread's wait", { 0, 1 }, TOL_NONE, true },
    { SYS_eventfd2, "eventfd2", "waking the agent thread", { 0, EFD_CLOEXEC | EFD_NONBLOCK }, TOL_NONE, true },
    { SYS_pidfd_open, "pidfd_open", "watching the cli", { 1, 0 }, TOL_ERRNO, true },
    { SYS_clone3, "clone3", "the agent thread", { 0, 88 }, TOL_ENOSYS, true },
    { SYS_clone, "clone", "the agent thread", { CLONE_THREAD_FLAGS }, TOL_NONE, true },
    { SYS_set_robust_list, "set_robust_list", "the agent thread's start", { 0, 24 }, TOL_ERRNO, true },
    { SYS_rseq, "rseq", "the agent thread's start", { 0, 32 }, TOL_ERRNO, true },
    { SYS_futex, "futex", "locks", { 0, FUTEX_WAKE_PRIVATE }, TOL_NONE, true },
    { SYS_mprotect, "mprotect", "patching the allocator's GOT slots", { 0, 4096, PROT_READ | PROT_WRITE }, TOL_NONE, true },
    { SYS_madvise, "madvise", "giving back tables and library pages at detach", { 0, 4096, MADV_DONTNEED }, TOL_ERRNO, true },
    { SYS_mkdir, "mkdir", "the socket directory", { 0, 0700 }, TOL_ERRNO, true },
    { SYS_chmod, "chmod", "the socket file", { 0, 0600 }, TOL_NONE, true },
    { SYS_unlink, "unlink", "a stale socket file", { 0 }, TOL_ERRNO, true },
    { SYS_geteuid, "geteuid", "the socket directory's owner", { 0 }, TOL_NONE, true },
    { SYS_gettid, "gettid", "thread ids in samples", { 0 }, TOL_NONE, true },
    { SYS_pipe2, "pipe2", "libunwind's memory probe", { 0, O_CLOEXEC | O_NONBLOCK }, TOL_ERRNO, true },
    { SYS_mincore, "mincore", "libunwind's memory probe", { 0, 4096 }, TOL_ERRNO, true },
    /* payload/leave.c: libunwind's address test, without its pipe. */
    { SYS_rt_sigprocmask, "rt_sigprocmask", "libunwind's address test", { 0x7fff, 0, 0, 8 }, TOL_ERRNO, true },
    { SYS_exit, "exit", "the agent thread's end", { 0 }, TOL_NONE, true },
    /* The snapshot at a fatal signal (payload/fatal.c): installing the
     * handler may fail (then there is none); in the handler, a futex wait
     * that fails only spins until its 1 s bound, and rt_tgsigqueueinfo
     * falls back to tgkill. */
    { SYS_rt_sigaction, "rt_sigaction", "the handler of fatal signals", { SIGSEGV, 0, 0, 8 }, TOL_ERRNO, true },
    { SYS_futex, "futex", "a crashing thread waiting for its snapshot", { 0, FUTEX_WAIT_PRIVATE, 1 }, TOL_ERRNO,
      true },
    { SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", "a fatal signal sent again", { 0, 0, SIGABRT }, TOL_ERRNO, true },
    { SYS_tgkill, "tgkill", "a fatal signal sent again", { 0, 0, SIGABRT }, TOL_NONE, true },
};

const char *inj_seccomp_action_name(uint32_t action, char *buf, size_t len)
{
    switch (action & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_KILL_PROCESS: return snprintf(buf, len, "KILL_PROCESS"), buf;
    case SECCOMP_RET_KILL_THREAD: return snprintf(buf, len, "KILL_THREAD"), buf;
    case SECCOMP_RET_TRAP: return snprintf(buf, len, "TRAP (SIGSYS)"), buf;
    case SECCOMP_RET_ERRNO:
        snprintf(buf, len, "ERRNO (%s)", strerror((int)(action & SECCOMP_RET_DATA)));
        return buf;
    case SECCOMP_RET_USER_NOTIF: return snprintf(buf, len, "USER_NOTIF (a supervisor decides)"), buf;
    case SECCOMP_RET_TRACE: return snprintf(buf, len, "TRACE"), buf;
    case SECCOMP_RET_LOG: return snprintf(buf, len, "LOG"), buf;
    case SECCOMP_RET_ALLOW: return snprintf(buf, len, "ALLOW"), buf;
    default: return snprintf(buf, len, "0x%08x", action), buf;
    }
}

/* Whether the call, answered `action`, still lets us go on. TRACE with no
 * tracer fails the call with ENOSYS (and we are the tracer only of the
 * thread we hold, which we do not let a TRACE stop reach: treat as the
 * ENOSYS a tracer-less process gets). */
static bool copes(const struct need *n, uint32_t action)
{
    uint32_t act = action & SECCOMP_RET_ACTION_FULL;

    if (hi_seccomp_allows(action))
        return true;
    if (act == SECCOMP_RET_ERRNO)
        return n->tol == TOL_ERRNO || (n->tol == TOL_ENOSYS && (action & SECCOMP_RET_DATA) == ENOSYS);
    if (act == SECCOMP_RET_TRACE)
        return n->tol == TOL_ERRNO || n->tol == TOL_ENOSYS;
    return false;
}

/* The thread has no seccomp filter: -ENOENT when it has no seccomp at
 * all, 0 (refused, why->strict) in strict mode, where the first call we
 * need (n) would kill it, -EINVAL when its status cannot tell. */
static int no_filter(pid_t tid, const struct need *n, struct inj_seccomp_refusal *why)
{
    struct inj_target_status st;

    if (inj_target_status(tid, &st) || st.seccomp < 0 || st.seccomp == 2)
        return -EINVAL;
    if (st.seccomp == 0)
        return -ENOENT;
    why->syscall = n->name;
    why->purpose = n->purpose;
    why->action = SECCOMP_RET_KILL_THREAD;
    why->strict = true;
    return 0;
}

int inj_seccomp_plan_check(pid_t tid, bool profiler, struct inj_seccomp_refusal *why)
{
    bool first = true;

    why->strict = false;
    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
        const struct need *n = &needs[i];
        struct seccomp_data d = { .nr = (int)n->nr, .arch = AUDIT_ARCH_X86_64 };
        uint32_t action = 0;

        if (n->profiler && !profiler)
            continue;
        memcpy(d.args, n->args, sizeof(d.args));
        int r = inj_seccomp_thread_action(tid, &d, &action);
        if (r == -EINVAL && first)
            /* The kernel answers EINVAL when the thread is not in filter
             * mode: no seccomp at all, or strict mode. */
            return no_filter(tid, n, why);
        first = false;
        if (r < 0)
            return r;
        if (!copes(n, action)) {
            why->syscall = n->name;
            why->purpose = n->purpose;
            why->action = action;
            return 0;
        }
    }
    return 1;
}

/* The calls of the agent's userfaultfd (payload/sys/seccomp_watch.c,
 * wait_prepare and wait_release; its mmap and munmap are in `needs`). */
static const struct need uffd_needs[] = {
    { SYS_userfaultfd, "userfaultfd", "the agent's wait", { O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY },
      TOL_ERRNO, true },
    { SYS_userfaultfd, "userfaultfd", "the agent's wait", { O_CLOEXEC | O_NONBLOCK }, TOL_ERRNO, true },
    /* refused: through /dev/userfaultfd */
    { SYS_openat, "openat", "the agent's wait", { (uint64_t)AT_FDCWD, 0, O_RDWR | O_CLOEXEC }, TOL_ERRNO, true },
    { SYS_ioctl, "ioctl", "the agent's wait", { 3, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY },
      TOL_ERRNO, true },
    { SYS_ioctl, "ioctl", "the agent's wait", { 3, UFFDIO_API }, TOL_ERRNO, true },
    { SYS_ioctl, "ioctl", "the agent's wait", { 3, UFFDIO_REGISTER }, TOL_ERRNO, true },
    { SYS_close, "close", "the agent's wait", { 3 }, TOL_NONE, true },
};

bool inj_seccomp_plan_uffd(pid_t tid)
{
    for (size_t i = 0; i < sizeof(uffd_needs) / sizeof(uffd_needs[0]); i++) {
        const struct need *n = &uffd_needs[i];
        struct seccomp_data d = { .nr = (int)n->nr, .arch = AUDIT_ARCH_X86_64 };
        uint32_t action = 0;

        memcpy(d.args, n->args, sizeof(d.args));
        if (inj_seccomp_thread_action(tid, &d, &action) < 0 || !copes(n, action))
            return false;
    }
    return true;
}

int inj_seccomp_strict_refusal(char *err, size_t errlen, pid_t pid, pid_t tid, const char *killer)
{
    return inj_err(err, errlen, INJ_ESECCOMP,
                   "pid %d (thread %d) runs in seccomp strict mode: only read, write, exit and "
                   "rt_sigreturn are allowed, and %s would kill it; nothing was done, the process "
                   "runs on as it was", (int)pid, (int)tid, killer);
}

int inj_seccomp_survey_refusal(pid_t pid, const struct inj_seccomp_survey *sv, char *err,
                               size_t errlen)
{
    if (sv->strict_tid)
        return inj_seccomp_strict_refusal(err, errlen, pid, sv->strict_tid,
                                          "an injected call (mmap(2) first), or the system calls "
                                          "heapinject's hooks make in a thread that allocates "
                                          "(futex(2), mmap(2), rt_sigprocmask(2)),");
    if (sv->odd_tid)
        return inj_err(err, errlen, INJ_ESECCOMP,
                       "pid %d's threads run under different seccomp filters (thread %d: %d "
                       "filters, thread %d: %d): heapinject checks the filters of the one thread it "
                       "holds, but its hooks run in every thread that allocates; nothing was done, "
                       "the process runs on as it was", (int)pid, (int)sv->ref_tid,
                       sv->ref_filters < 0 ? 0 : sv->ref_filters, (int)sv->odd_tid,
                       sv->odd_filters < 0 ? 0 : sv->odd_filters);
    return INJ_OK;
}
