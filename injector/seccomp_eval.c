/* seccomp_eval.c - a thread's seccomp filters, read with ptrace
 * (PTRACE_SECCOMP_GET_FILTER) and run over one system call
 * (common/seccomp_bpf.c).
 *
 * The rescue page (injector/remote_call.c) unmaps itself should we die,
 * with a munmap that then runs unwatched: under a filter that refuses or
 * traps munmap, that would kill the target. Whether the filters allow it is
 * answered here, as are the plan's calls (seccomp_plan.c) and the agent's
 * groups of calls (common/seccomp_gate_calls.h). */
#include "injector/seccomp_eval.h"

#include <errno.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "common/seccomp_gate_calls.h"

int inj_seccomp_thread_action(pid_t tid, const struct seccomp_data *d, uint32_t *action)
{
    struct sock_filter *buf = malloc(HI_SECCOMP_MAX_INSNS * sizeof(*buf));
    uint32_t all = SECCOMP_RET_ALLOW;
    unsigned long idx;
    int r = 0;

    if (!buf)
        return -ENOMEM;
    for (idx = 0;; idx++) {
        long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, NULL);

        if (n > 0 && n <= HI_SECCOMP_MAX_INSNS)
            n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, buf);
        if (n == -1) {
            r = errno == ENOENT && idx > 0 ? 0 : -errno;
            break;
        }
        if (n <= 0 || n > HI_SECCOMP_MAX_INSNS) {
            r = -EPROTO;
            break;
        }
        all = hi_seccomp_combine(all, hi_seccomp_eval(buf, (size_t)n, d));
    }
    free(buf);
    if (r == 0)
        *action = all;
    return r;
}

int inj_seccomp_gate_eval(pid_t tid, uint32_t *allowed, int first_bad[HI_GATE_NGROUPS],
                          uint32_t actions[HI_GATE_NGROUPS])
{
    *allowed = HI_GATE_ALL_GROUPS;
    for (int g = 0; g < HI_GATE_NGROUPS; g++)
        first_bad[g] = -1;
    for (size_t i = 0; i < hi_gate_ncalls; i++) {
        const struct hi_gate_call *c = &hi_gate_calls[i];
        struct seccomp_data d = { .nr = (int)c->nr, .arch = AUDIT_ARCH_X86_64 };
        memcpy(d.args, c->args, sizeof(d.args));
        uint32_t action = 0;
        int r = inj_seccomp_thread_action(tid, &d, &action);
        if (r < 0)
            return r;
        if (hi_seccomp_allows(action))
            continue;
        int g = __builtin_ctz(c->group);
        if (*allowed & c->group) {
            first_bad[g] = (int)i;
            actions[g] = action;
        }
        *allowed &= ~c->group;
    }
    return 0;
}
