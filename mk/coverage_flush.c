/* coverage_flush.c - linked into build-cov's payload only (mk/coverage.mk):
 * the payload lives in a target that the e2e tests end with SIGKILL, so
 * its --coverage counts would never reach disk at exit. The coverage link
 * wraps pl_session_agent_exited (--wrap): when the agent leaves (detach,
 * time-to-live, target exit), the counts are written first. */
#include <stdarg.h>
#include <sys/syscall.h>

void __gcov_dump(void);
void __real_pl_session_agent_exited(void);
void __wrap_pl_session_agent_exited(void);

void __wrap_pl_session_agent_exited(void)
{
    __gcov_dump();
    __real_pl_session_agent_exited();
}

/* The census's copy of the target (payload/census/census.c) ends with
 * syscall(SYS_exit_group): its counts are written first (the copy's counts
 * include the target's up to the clone: enough to say what ran). */
long __real_syscall(long n, ...);
long __wrap_syscall(long n, ...);

long __wrap_syscall(long n, ...)
{
    va_list ap;
    long a[6];
    va_start(ap, n);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_exit_group)
        __gcov_dump();
    return __real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
