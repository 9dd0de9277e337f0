/* coverage_flush.c - linked into build-cov's payload only (mk/coverage.mk):
 * the payload lives in a target that the e2e tests end with SIGKILL, so
 * its --coverage counts would never reach disk at exit. The coverage link
 * wraps pl_session_agent_exited (--wrap): when the agent leaves (detach,
 * time-to-live, target exit), the counts are written first. */
void __gcov_dump(void);
void __real_pl_session_agent_exited(void);
void __wrap_pl_session_agent_exited(void);

void __wrap_pl_session_agent_exited(void)
{
    __gcov_dump();
    __real_pl_session_agent_exited();
}
