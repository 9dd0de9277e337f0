/* seccomp_gate_calls.c - see seccomp_gate_calls.h. The calls are the
 * agent's as `perf trace` of a sealed agent shows them (payload/serve/
 * agent.c, payload/sys/seccomp_watch.c): descriptors as 3, pointers 0. */
#include "common/seccomp_gate_calls.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

const struct hi_gate_call hi_gate_calls[] = {
    { HI_GATE_PARK, SYS_poll, "poll", { 0, 0, (uint64_t)-1 } },
    { HI_GATE_SERVE, SYS_poll, "poll", { 0, 1, 50 } },
    { HI_GATE_SERVE, SYS_pread64, "pread64", { 3, 0, 4095, 0 } },
    { HI_GATE_SERVE, SYS_recvfrom, "recvfrom", { 3, 0, 16, MSG_DONTWAIT } },
    { HI_GATE_SERVE, SYS_sendmsg, "sendmsg", { 3, 0, MSG_NOSIGNAL | MSG_DONTWAIT } },
    { HI_GATE_SERVE, SYS_accept4, "accept4", { 3, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK } },
    { HI_GATE_SERVE, SYS_getsockopt, "getsockopt", { 3, SOL_SOCKET, SO_PEERCRED } },
    { HI_GATE_SERVE, SYS_geteuid, "geteuid", { 0 } },
    { HI_GATE_SERVE, SYS_getpid, "getpid", { 0 } },
    { HI_GATE_SERVE, SYS_gettid, "gettid", { 0 } },
    { HI_GATE_SERVE, SYS_read, "read", { 3, 0, 8 } },
    { HI_GATE_SERVE, SYS_write, "write", { 3, 0, 8 } },
    { HI_GATE_SERVE, SYS_close, "close", { 3 } },
    { HI_GATE_SERVE, SYS_nanosleep, "nanosleep", { 0 } },
    { HI_GATE_SERVE, SYS_futex, "futex", { 0, 0x80 /* FUTEX_WAIT_PRIVATE */, 1 } },
    { HI_GATE_SERVE, SYS_futex, "futex", { 0, 0x81 /* FUTEX_WAKE_PRIVATE */, 1 } },
    { HI_GATE_SERVE, SYS_mmap, "mmap", { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 } },
    { HI_GATE_SERVE, SYS_munmap, "munmap", { 0, 4096 } },
    { HI_GATE_SERVE, SYS_unlink, "unlink", { 0 } },
    { HI_GATE_SERVE, SYS_rt_sigaction, "rt_sigaction", { 11, 0, 0, 8 } },
    { HI_GATE_SERVE, SYS_rt_sigprocmask, "rt_sigprocmask", { 0x7fff, 0, 0, 8 } },
    { HI_GATE_SERVE, SYS_clock_gettime, "clock_gettime", { 1, 0 } },
    { HI_GATE_PROC, SYS_openat, "openat", { (uint64_t)AT_FDCWD, 0, O_RDONLY | O_CLOEXEC } },
    { HI_GATE_PROC, SYS_read, "read", { 3, 0, 127 } },
    { HI_GATE_PROC, SYS_close, "close", { 3 } },
    { HI_GATE_MPROTECT, SYS_mprotect, "mprotect", { 0, 4096, PROT_READ | PROT_WRITE } },
    { HI_GATE_MPROTECT, SYS_mprotect, "mprotect", { 0, 4096, PROT_READ } },
    { HI_GATE_LEAVE, SYS_madvise, "madvise", { 0, 4096, MADV_DONTNEED } },
    { HI_GATE_LEAVE, SYS_exit, "exit", { 0 } },
    { HI_GATE_SLEEP_FUTEX, SYS_futex, "futex", { 0, 0x80 /* FUTEX_WAIT_PRIVATE */, 0, 0 } },
    { HI_GATE_SLEEP_PAUSE, SYS_pause, "pause", { 0 } },
};

const size_t hi_gate_ncalls = sizeof(hi_gate_calls) / sizeof(hi_gate_calls[0]);

_Static_assert(sizeof(hi_gate_calls) / sizeof(hi_gate_calls[0]) < 128, "first_bad holds an int8_t index");

uint32_t hi_gate_groups_allowed(const struct sock_filter *prog, size_t len, int8_t first_bad[HI_GATE_NGROUPS],
                                uint32_t actions[HI_GATE_NGROUPS])
{
    uint32_t allowed = HI_GATE_ALL_GROUPS;
    for (int g = 0; first_bad && g < HI_GATE_NGROUPS; g++)
        first_bad[g] = -1;
    for (size_t i = 0; i < hi_gate_ncalls; i++) {
        const struct hi_gate_call *c = &hi_gate_calls[i];
        struct seccomp_data d = { .nr = (int)c->nr, .arch = AUDIT_ARCH_X86_64 };
        memcpy(d.args, c->args, sizeof(d.args));
        uint32_t action = hi_seccomp_eval(prog, len, &d);
        if (hi_seccomp_allows(action))
            continue;
        int g = __builtin_ctz(c->group);
        if ((allowed & c->group) && first_bad)
            first_bad[g] = (int8_t)i;
        if ((allowed & c->group) && actions)
            actions[g] = action;
        allowed &= ~c->group;
    }
    return allowed;
}
