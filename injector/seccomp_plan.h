/* seccomp_plan.h - will the thread's seccomp filters let an injection (and
 * the profiler it starts) make every system call it needs? Decided before
 * anything is changed in the target. */
#ifndef HI_INJECTOR_SECCOMP_PLAN_H
#define HI_INJECTOR_SECCOMP_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/target.h"

/* The first call that would be refused. */
struct inj_seccomp_refusal {
    const char *syscall;   /* "socket" */
    const char *purpose;   /* "the profiler's socket" */
    uint32_t action;       /* SECCOMP_RET_* the filters answer */
    bool strict;           /* no filter but strict mode (prctl
                              PR_SET_SECCOMP, SECCOMP_MODE_STRICT): only
                              read, write, exit and rt_sigreturn run, any
                              other call kills the thread */
};

/* Evaluates every filter of the ptrace-stopped thread tid against the
 * system calls of loading a library with dlopen (and of the injector's own
 * calls), and with `profiler` also those of heapinject_start and its agent
 * thread, with the arguments they are made with. Returns 1 when all run
 * (ALLOW or LOG, or a refusal the code copes with: an ERRNO where the
 * caller has a fallback), 0 with *why filled when one would not, -errno
 * when the filters cannot be read (then nothing is known: -ENOENT means
 * there is no filter). A thread in strict mode (no filter the kernel
 * would show) is refused with why->strict set. */
int inj_seccomp_plan_check(pid_t tid, bool profiler, struct inj_seccomp_refusal *why);

/* Whether the ptrace-stopped thread tid's filters let the agent make the
 * userfaultfd it sleeps on once a later filter seals it
 * (payload/sys/seccomp_watch.c): userfaultfd(2) with and without
 * UFFD_USER_MODE_ONLY, its two ioctls, close: each allowed or answered
 * with an error (the agent then goes without). False when the filters
 * cannot be read. Call after inj_seccomp_plan_check returned 1. */
bool inj_seccomp_plan_uffd(pid_t tid);

/* The refusal of a process with a thread in strict mode, into err
 * (INJ_ESECCOMP): `killer` ("mmap(2), which ... needs,") would kill it. */
int inj_seccomp_strict_refusal(char *err, size_t errlen, pid_t pid, pid_t tid, const char *killer);

/* The state check's refusal (inj_check_target, before any thread is
 * held, for ptrace and gdb alike) of a process with a thread in strict
 * mode, or whose threads' seccomp filters differ: the filters are
 * evaluated in the held thread only, and the hooks run in every thread.
 * INJ_OK or INJ_ESECCOMP with err filled. */
int inj_seccomp_survey_refusal(pid_t pid, const struct inj_seccomp_survey *sv, char *err,
                               size_t errlen);

/* "KILL_PROCESS", "KILL_THREAD", "TRAP", "ERRNO (EPERM)", "TRACE",
 * "USER_NOTIF", "LOG", "ALLOW" into buf. */
const char *inj_seccomp_action_name(uint32_t action, char *buf, size_t len);

#endif /* HI_INJECTOR_SECCOMP_PLAN_H */
