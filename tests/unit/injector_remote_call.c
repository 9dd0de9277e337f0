/* injector_remote_call.c - a real remote call on a forked child: seize,
 * interrupt inside nanosleep, call functions in it, restore, detach; the
 * child's sleep is not cut short and it sees no EINTR. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "injector/inject.h"
#include "injector/ptrace_session.h"
#include "injector/remote_call.h"

static int pipefd[2];

static pid_t spawn_sleeper(void)
{
    pid_t p;

    cr_assert_eq(pipe(pipefd), 0);
    p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        struct timespec ts = { 1, 0 }, a, b;
        int rc;

        clock_gettime(CLOCK_MONOTONIC, &a);
        rc = nanosleep(&ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        /* Exit status: 0 = full sleep and no error. */
        _exit(rc != 0 ? 1 : (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000000L ? 2 : 0);
    }
    usleep(100 * 1000);
    return p;
}

static uint64_t libc_fn(const char *name)
{
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

    cr_assert_not_null(h);
    return (uint64_t)(uintptr_t)dlsym(h, name);
}

Test(injector_remote_call, calls_functions_and_restores_the_thread, .timeout = 20)
{
    pid_t child = spawn_sleeper();
    struct inj_thread t;
    struct inj_call c;
    char err[512] = "";
    uint64_t ret = 0, addr, args[1];
    int st;

    cr_assert_eq(inj_thread_seize(&t, child, child), 0);
    cr_assert_eq(inj_thread_interrupt(&t, 2000), 0);
    cr_assert_eq(t.stop, INJ_STOP_EVENT);
    cr_assert_eq(inj_call_begin(&c, &t, false, err, sizeof(err)), INJ_OK, "%s", err);

    /* The child is a fork of us: same libc addresses. */
    cr_assert_eq(inj_call_run(&c, "getpid", libc_fn("getpid"), NULL, 0, &ret, err, sizeof(err)),
                 INJ_OK, "%s", err);
    cr_expect_eq((pid_t)ret, child);
    cr_assert_eq(inj_call_put_string(&c, "seventeen chars!!", &addr, err, sizeof(err)), INJ_OK);
    args[0] = addr;
    cr_assert_eq(inj_call_run(&c, "strlen", libc_fn("strlen"), args, 1, &ret, err, sizeof(err)),
                 INJ_OK, "%s", err);
    cr_expect_eq(ret, 17);
    cr_expect_eq(c.seccomp_syscall, -1);

    cr_assert_eq(inj_call_end(&c, err, sizeof(err)), INJ_OK, "%s", err);
    cr_assert_eq(inj_thread_detach(&t), 0);
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st), "child died: status %d", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "nanosleep in the child was disturbed (%d)", WEXITSTATUS(st));
}

Test(injector_remote_call, a_faulting_call_is_undone, .timeout = 20)
{
    pid_t child = spawn_sleeper();
    struct inj_thread t;
    struct inj_call c;
    char err[512] = "";
    uint64_t ret = 0, args[1] = { 8 };   /* strlen((char *)8): SIGSEGV */
    int st;

    cr_assert_eq(inj_thread_seize(&t, child, child), 0);
    cr_assert_eq(inj_thread_interrupt(&t, 2000), 0);
    cr_assert_eq(inj_call_begin(&c, &t, false, err, sizeof(err)), INJ_OK, "%s", err);
    cr_expect_eq(inj_call_run(&c, "strlen", libc_fn("strlen"), args, 1, &ret, err, sizeof(err)),
                 INJ_EINTERNAL);
    cr_expect(c.crashed);
    cr_expect(strstr(err, "SEGV") != NULL, "%s", err);
    cr_assert_eq(inj_call_end(&c, err, sizeof(err)), INJ_OK, "%s", err);
    cr_assert_eq(inj_thread_detach(&t), 0);
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child did not survive: status %d", st);
}
