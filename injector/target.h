/* target.h - facts about the target process from /proc, and the preflight
 * checks (inj_check_target in inject.h) built on them. */
#ifndef HI_INJECTOR_TARGET_H
#define HI_INJECTOR_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inj_target_status {
    char comm[64];
    char state;              /* 'R', 'S', 'D', 'T', 't', 'Z', ... */
    uid_t uid[4];            /* real, effective, saved, filesystem */
    gid_t gid[4];
    pid_t tracer;            /* TracerPid */
    pid_t tgid;              /* Tgid: the process this task belongs to */
    pid_t ppid;              /* PPid */
    int seccomp;             /* Seccomp: 0 none, 1 strict, 2 filter; -1 not shown */
    int seccomp_filters;     /* Seccomp_filters: how many (Linux >= 5.9); -1 not shown */
    uint64_t sigblk;         /* SigBlk: signals blocked now (bit n-1: signal n) */
    bool have_sigblk;
    uint64_t sigpnd, shdpnd; /* SigPnd, ShdPnd: pending for the thread, the process */
};

/* Reads /proc/PID/status (works for thread ids too). 0 or -errno. */
int inj_target_status(pid_t pid, struct inj_target_status *st);

/* Is pid on its way out: gone, a zombie, or a process killed whose threads
 * have not all finished dying? SIGKILL is pending (SigPnd/ShdPnd), or every
 * live thread is in do_exit (PF_EXITING in /proc/TID/stat's flags), or the
 * memory is already released (empty maps). In that window /proc answers
 * as if something else happened: no libc (an exec?), no maps (a static
 * binary?), EPERM. */
bool inj_target_exiting(pid_t pid);

/* The thread ids of pid, main thread first. Returns the count (>= 0, at
 * most max) or -errno. */
int inj_target_threads(pid_t pid, pid_t *tids, int max);

/* What the threads' Seccomp: and Seccomp_filters: lines say, gathered by
 * the state check (inj_check_target) in its one read of each thread's
 * status. A thread in strict mode may make no system call but read,
 * write, exit and rt_sigreturn: neither an injected call nor the hooks
 * (which may make futex, mmap or rt_sigprocmask calls in whatever thread
 * allocates) can run in it. Threads whose filters differ (one installed
 * filters without TSYNC after the other was started): the filters are
 * read and evaluated in the held thread only, the hooks run in all of
 * them (injector/seccomp_plan.c, inj_seccomp_survey_refusal). */
struct inj_seccomp_survey {
    pid_t strict_tid;        /* the first thread in strict mode, or 0 */
    pid_t ref_tid, odd_tid;  /* the first live thread; one whose mode or filter count differ, or 0 */
    int ref_mode;
    int ref_filters, odd_filters;
};

/* A thread of pid whose /proc entries describe the process: pid itself,
 * unless its main thread has exited (pthread_exit in main leaves it a
 * zombie with no maps, exe or namespaces) while others run on. Returns a
 * thread id or -ESRCH when the whole process is gone. */
pid_t inj_target_live_task(pid_t pid);

/* Whether thread tid of pid waits in vfork() (or clone/clone3 with
 * CLONE_VFORK) for its child to exec or exit: it sleeps uninterruptibly
 * (state D) until then and no ptrace stop reaches it. When child is not
 * NULL it gets that child's pid (0 when not found). */
bool inj_target_in_vfork(pid_t pid, pid_t tid, pid_t *child);

/* Whether pid is a vfork child (or any clone) sharing its memory with its
 * parent: kcmp(KCMP_VM), else the parent's threads waiting in vfork with
 * pid among their children. Sets *parent. */
bool inj_target_shares_parent_vm(pid_t pid, const struct inj_target_status *st, pid_t *parent);

/* Whether we may ptrace a process owned by these credentials: root or
 * CAP_SYS_PTRACE, or the same user (real, effective and saved ids). */
bool inj_target_may_trace(const struct inj_target_status *st);

/* Whether pid lives in another mount namespace than we do. */
bool inj_target_other_mntns(pid_t pid);

/* Copies src into dst (len > 0) with every control character shown as
 * \xNN: names and paths from the target go into our messages, and an
 * escape sequence in them could retitle the user's terminal or hide lines.
 * Stops early rather than cut an escape. */
void inj_target_printable(char *dst, size_t len, const char *src);

#endif /* HI_INJECTOR_TARGET_H */
