/* Unit tests for injector/seccomp_eval.c: a child's filters read back
 * through ptrace and run over one call, and over the agent's groups of
 * calls (common/seccomp_gate_calls.h). Skipped where the kernel does not
 * let us read filters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/seccomp_gate.h"
#include "injector/seccomp_eval.h"

#define N(f) (sizeof(f) / sizeof((f)[0]))
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

/* A child stopped under the filter f (seized: the caller kills it). */
static pid_t child_under(const struct sock_filter *f, unsigned short n)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct sock_fprog prog = { n, (struct sock_filter *)f };
        char c = 0;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
            _exit(1);
        if (write(fds[1], &c, 1) != 1)
            _exit(1);
        for (;;)
            sleep(1000); /* not pause(2): a filter below traps it */
    }
    char c;
    cr_assert_eq(read(fds[0], &c, 1), 1);
    close(fds[0]);
    close(fds[1]);
    cr_assert_eq(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
    cr_assert_eq(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, __WALL), pid);
    return pid;
}

static void end_child(pid_t pid)
{
    int st;
    kill(pid, SIGKILL);
    waitpid(pid, &st, __WALL);
}

/* A child under a filter that refuses munmap. */
Test(seccomp_eval, thread_action_of_a_child)
{
    struct sock_filter f[] = {
        LD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    pid_t pid = child_under(f, N(f));
    struct seccomp_data d = { .nr = __NR_munmap, .arch = AUDIT_ARCH_X86_64, .args = { 0x1000000000ull, 69632 } };
    uint32_t action = 0;
    int r = inj_seccomp_thread_action(pid, &d, &action);
    end_child(pid);
    if (r == -EACCES || r == -EINVAL)
        cr_skip_test("PTRACE_SECCOMP_GET_FILTER: %s", strerror(-r));
    cr_expect_eq(r, 0);
    cr_expect_eq(action, SECCOMP_RET_ERRNO | EPERM);
}

/* The agent's groups under a filter that traps pause(2) and kills any
 * poll with no timeout: every group but PARK and SLEEP_PAUSE, and the
 * first refused call of each named. */
Test(seccomp_eval, gate_groups_of_a_child)
{
    struct sock_filter f[] = {
        LD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pause, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_poll, 0, 3),
        LD(args[2]),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    pid_t pid = child_under(f, N(f));
    uint32_t allowed = 0, actions[HI_GATE_NGROUPS] = { 0 };
    int bad[HI_GATE_NGROUPS];
    int r = inj_seccomp_gate_eval(pid, &allowed, bad, actions);
    end_child(pid);
    if (r == -EACCES || r == -EINVAL)
        cr_skip_test("PTRACE_SECCOMP_GET_FILTER: %s", strerror(-r));
    cr_assert_eq(r, 0);
    cr_expect_eq(allowed, HI_GATE_ALL_GROUPS & ~(HI_GATE_PARK | HI_GATE_SLEEP_PAUSE), "allowed %#x", allowed);
    int park = __builtin_ctz(HI_GATE_PARK), pause_g = __builtin_ctz(HI_GATE_SLEEP_PAUSE);
    cr_assert_geq(bad[park], 0);
    cr_expect_str_eq(hi_gate_calls[bad[park]].name, "poll");
    cr_expect_eq(actions[park], SECCOMP_RET_KILL_PROCESS);
    cr_assert_geq(bad[pause_g], 0);
    cr_expect_str_eq(hi_gate_calls[bad[pause_g]].name, "pause");
    cr_expect_eq(bad[__builtin_ctz(HI_GATE_SERVE)], -1);
}
