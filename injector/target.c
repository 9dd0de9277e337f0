/* target.c - facts about the target process from /proc, and the preflight
 * checks of inj_check_target(): exists, permission, not traced, same
 * architecture, dynamically linked. They run before the target is touched
 * and say what to do; the kernel still has the last word at PTRACE_SEIZE. */
#include "injector/target.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "injector/elfsym.h"
#include "injector/inject.h"
#include "injector/log.h"
#include "injector/maps.h"
#include "injector/seccomp_plan.h"

#define CAP_SYS_PTRACE_BIT 19

void inj_target_printable(char *dst, size_t len, const char *src)
{
    size_t o = 0;
    for (; *src && o + 5 <= len; src++) {
        unsigned char ch = (unsigned char)*src;
        if (ch < 0x20 || ch == 0x7f)
            o += (size_t)snprintf(dst + o, len - o, "\\x%02x", ch);
        else
            dst[o++] = (char)ch;
    }
    dst[o] = '\0';
}

int inj_target_status(pid_t pid, struct inj_target_status *st)
{
    char path[64], line[512];
    FILE *f;

    memset(st, 0, sizeof(*st));
    st->seccomp = -1;
    st->seccomp_filters = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "Name:", 5)) {
            char *s = line + 5;

            s += strspn(s, " \t");
            s[strcspn(s, "\n")] = '\0';
            /* The process chooses its name (prctl PR_SET_NAME) and it goes
             * into our messages; 16 bytes at most become 61. */
            inj_target_printable(st->comm, sizeof(st->comm), s);
        } else if (!strncmp(line, "State:", 6)) {
            sscanf(line + 6, " %c", &st->state);
        } else if (!strncmp(line, "Uid:", 4)) {
            sscanf(line + 4, "%u %u %u %u", &st->uid[0], &st->uid[1], &st->uid[2], &st->uid[3]);
        } else if (!strncmp(line, "Gid:", 4)) {
            sscanf(line + 4, "%u %u %u %u", &st->gid[0], &st->gid[1], &st->gid[2], &st->gid[3]);
        } else if (!strncmp(line, "Tgid:", 5)) {
            sscanf(line + 5, "%d", &st->tgid);
        } else if (!strncmp(line, "PPid:", 5)) {
            sscanf(line + 5, "%d", &st->ppid);
        } else if (!strncmp(line, "TracerPid:", 10)) {
            sscanf(line + 10, "%d", &st->tracer);
        } else if (!strncmp(line, "Seccomp:", 8)) {
            sscanf(line + 8, "%d", &st->seccomp);
        } else if (!strncmp(line, "Seccomp_filters:", 16)) {
            sscanf(line + 16, "%d", &st->seccomp_filters);
        } else if (!strncmp(line, "SigBlk:", 7)) {
            st->sigblk = strtoull(line + 7, NULL, 16);
            st->have_sigblk = true;
        } else if (!strncmp(line, "SigPnd:", 7)) {
            st->sigpnd = strtoull(line + 7, NULL, 16);
        } else if (!strncmp(line, "ShdPnd:", 7)) {
            st->shdpnd = strtoull(line + 7, NULL, 16);
        }
    }
    fclose(f);
    /* A task that exits between the open and the read gives an empty
     * file (the read fails with ESRCH): that is a task gone, not a task
     * with no state, no seccomp mode and no filters. */
    return st->state ? 0 : -ESRCH;
}

int inj_target_threads(pid_t pid, pid_t *tids, int max)
{
    char path[64];
    struct dirent *de;
    DIR *d;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (!d)
        return -errno;
    if (max > 0)
        tids[n++] = pid;
    while ((de = readdir(d)) && n < max) {
        pid_t tid = (pid_t)atoi(de->d_name);

        if (tid > 0 && tid != pid)
            tids[n++] = tid;
    }
    closedir(d);
    return n;
}

/* Adds live thread tid, whose status is st, to the survey. A read that
 * stopped before the Seccomp: line (the thread exited while its status
 * was being read: the kernel then ends the file early) says nothing
 * about its filters and is left out. */
static void survey_add(struct inj_seccomp_survey *sv, pid_t tid, const struct inj_target_status *st)
{
    if (st->seccomp < 0)
        return;
    if (st->seccomp == 1 && !sv->strict_tid)
        sv->strict_tid = tid;
    if (!sv->ref_tid) {
        sv->ref_tid = tid;
        sv->ref_mode = st->seccomp;
        sv->ref_filters = st->seccomp_filters;
    } else if (!sv->odd_tid &&
               (st->seccomp != sv->ref_mode || st->seccomp_filters != sv->ref_filters)) {
        sv->odd_tid = tid;
        sv->odd_filters = st->seccomp_filters;
    }
}

static bool task_alive(pid_t tid)
{
    struct inj_target_status st;

    return inj_target_status(tid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

#define PF_EXITING_FLAG 0x4u /* include/linux/sched.h: getting shut down */
#define SIGKILL_BIT (1ull << (SIGKILL - 1))

/* The flags field (the 9th) of /proc/TID/stat; 0 if it cannot be read. */
static unsigned task_flags(pid_t tid)
{
    char path[64], buf[1024], *p;
    unsigned flags = 0;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* comm may hold spaces and ')': the fields start after the last ')'. */
    p = strrchr(buf, ')');
    if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
        flags = 0;
    return flags;
}

bool inj_target_exiting(pid_t pid)
{
    struct inj_target_status st;
    pid_t tids[256];
    char path[64];
    int n, fd, running = 0, exiting = 0;
    bool empty_maps;
    char c;

    n = inj_target_threads(pid, tids, 256);
    if (n <= 0)
        return true;
    for (int i = 0; i < n; i++) {
        if (inj_target_status(tids[i], &st) || st.state == 'Z' || st.state == 'X')
            continue; /* gone or a zombie: the others decide */
        if ((st.sigpnd | st.shdpnd) & SIGKILL_BIT)
            return true;
        running++;
        exiting += (task_flags(tids[i]) & PF_EXITING_FLAG) != 0;
    }
    /* Every thread in do_exit: a group exit. One thread alone there is a
     * thread ending (pthread_exit), not the process. */
    if (running == 0 || exiting == running)
        return true;
    pid = inj_target_live_task(pid);
    if (pid < 0)
        return true;
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return inj_target_live_task(pid) < 0;
    empty_maps = read(fd, &c, 1) == 0;
    close(fd);
    return empty_maps;
}

pid_t inj_target_live_task(pid_t pid)
{
    pid_t tids[256];
    int n;

    if (task_alive(pid))
        return pid;
    n = inj_target_threads(pid, tids, 256);
    for (int i = 1; i < n; i++)
        if (task_alive(tids[i]))
            return tids[i];
    return -ESRCH;
}

/* The first child listed in /proc/PID/task/TID/children (0: none). */
static pid_t first_child(pid_t pid, pid_t tid)
{
    char path[96];
    int c = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    if (fscanf(f, "%d", &c) != 1)
        c = 0;
    fclose(f);
    return (pid_t)c;
}

/* Whether the children of thread tid of pid include child. */
static bool has_child(pid_t pid, pid_t tid, pid_t child)
{
    char path[96];
    int c;
    bool found = false;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
    f = fopen(path, "re");
    if (!f)
        return false;
    while (!found && fscanf(f, "%d", &c) == 1)
        found = c == child;
    fclose(f);
    return found;
}

static bool in_vfork_st(pid_t pid, pid_t tid, const struct inj_target_status *st, pid_t *child);

bool inj_target_in_vfork(pid_t pid, pid_t tid, pid_t *child)
{
    struct inj_target_status st;

    if (child)
        *child = 0;
    if (inj_target_status(tid, &st))
        return false;
    return in_vfork_st(pid, tid, &st, child);
}

/* inj_target_in_vfork with tid's status just read by the caller. */
static bool in_vfork_st(pid_t pid, pid_t tid, const struct inj_target_status *st, pid_t *child)
{
    char path[96], line[256];
    unsigned long long nr = 0, a1 = 0;
    bool vfork = false;
    FILE *f;

    if (child)
        *child = 0;
    if (st->state != 'D')
        return false;
    /* /proc/PID/syscall: "NR ARG1 ... SP PC" while blocked in a syscall
     * (needs the ptrace access we need anyway). */
    snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    f = fopen(path, "re");
    if (!f)
        return false;
    if (fgets(line, sizeof(line), f) && sscanf(line, "%llu %llx", &nr, &a1) >= 1) {
        /* vfork (58); clone (56) with CLONE_VFORK (0x4000) in its flags,
         * as posix_spawn does; clone3 (435) only sleeps in D for a vfork. */
        vfork = nr == 58 || (nr == 56 && (a1 & 0x4000)) || nr == 435;
    }
    fclose(f);
    if (vfork && child)
        *child = first_child(pid, tid);
    return vfork;
}

bool inj_target_shares_parent_vm(pid_t pid, const struct inj_target_status *st, pid_t *parent)
{
    pid_t tids[64];
    long r;
    int n;

    *parent = st->ppid;
    if (st->ppid <= 1)
        return false;
    /* kcmp() tells whether two processes share one address space (0:
     * equal), with the ptrace read access we need anyway. KCMP_VM is 1;
     * type 0 is KCMP_FILE, which compared fd 0 and took every child that
     * shares its parent's stdin for a vfork child. */
    r = syscall(SYS_kcmp, pid, st->ppid, KCMP_VM, 0UL, 0UL);
    if (r >= 0)
        return r == 0;
    /* No kcmp (CONFIG_KCMP off, a filter): a parent thread waiting in
     * vfork with pid among its children. */
    n = inj_target_threads(st->ppid, tids, 64);
    for (int i = 0; i < n; i++)
        if (inj_target_in_vfork(st->ppid, tids[i], NULL) && has_child(st->ppid, tids[i], pid))
            return true;
    return false;
}

static bool have_cap_sys_ptrace(void)
{
    char line[256];
    unsigned long long eff = 0;
    FILE *f = fopen("/proc/self/status", "re");

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "CapEff:", 7))
            sscanf(line + 7, "%llx", &eff);
    fclose(f);
    return (eff >> CAP_SYS_PTRACE_BIT) & 1;
}

bool inj_target_may_trace(const struct inj_target_status *st)
{
    uid_t me = geteuid();

    if (have_cap_sys_ptrace())
        return true;
    /* ptrace_may_access(): our uid must match the target's real, effective
     * and saved uid (and gids); setuid programs are off limits. */
    return st->uid[0] == me && st->uid[1] == me && st->uid[2] == me;
}

bool inj_target_other_mntns(pid_t pid)
{
    char path[64];
    struct stat a, b;

    snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
    if (stat(path, &a) || stat("/proc/self/ns/mnt", &b))
        return false;
    return a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

static const char *perm_hint(void)
{
    return "run as root or as the target's user; see kernel.yama.ptrace_scope and "
           "CAP_SYS_PTRACE";
}

static int check_target(pid_t pid, bool program, char *err, size_t errlen);

/* What the process is doing now, when that means it cannot run our code:
 * stopped, a vfork child living in its parent's memory, a parent waiting
 * in vfork, a thread in seccomp strict mode or threads with different
 * filters. Each is refused before any ptrace call, leaving the process
 * exactly as it was. rep is a live thread of pid, st pid's status. */
static int check_state(pid_t pid, pid_t rep, const struct inj_target_status *st, char *err,
                       size_t errlen)
{
    enum { MAX_THREADS = 65536 };
    struct inj_target_status rs, ps;
    struct inj_seccomp_survey sv;
    pid_t *tids, parent, child;
    int n, waiting = 0, dead = 0;

    /* st was read a moment ago by the caller: for the usual rep == pid it
     * is rep's status (one /proc read less on the attach's path). */
    if (rep == pid)
        rs = *st;
    else if (inj_target_status(rep, &rs))
        return INJ_OK; /* gone: the caller finds out */
    if (rs.state == 'T')
        return inj_err(err, errlen, INJ_ESTATE,
                       "pid %d (%s) is stopped (state T: SIGSTOP, SIGTSTP or job control); a "
                       "stopped process cannot run the profiler. It was left stopped, untouched: "
                       "resume it (kill -CONT %d) and retry", (int)pid, st->comm, (int)pid);
    if (inj_target_shares_parent_vm(pid, st, &parent)) {
        if (inj_target_status(parent, &ps))
            snprintf(ps.comm, sizeof(ps.comm), "?");
        return inj_err(err, errlen, INJ_ESTATE,
                       "pid %d (%s) is a vfork child of pid %d (%s): it runs in its parent's "
                       "memory until it calls exec or exits, so hooks put into it would stay "
                       "in pid %d with no profiler to remove them. Nothing was done; profile the "
                       "program it execs, or pid %d once the child is gone", (int)pid, st->comm,
                       (int)parent, ps.comm, (int)parent, (int)parent);
    }
    /* Every live thread in vfork: nothing can stop (a multi-threaded
     * parent is fine: hold_safe_thread skips the waiting thread). */
    child = 0;
    memset(&sv, 0, sizeof(sv));
    if (!(tids = malloc(MAX_THREADS * sizeof(*tids))))
        return inj_err(err, errlen, INJ_EINTERNAL, "out of memory");
    n = inj_target_threads(pid, tids, MAX_THREADS);
    for (int i = 0; i < n; i++) {
        struct inj_target_status ts;
        pid_t c;

        /* One read of each thread's status for all the questions. */
        if (inj_target_status(tids[i], &ts) || ts.state == 'Z' || ts.state == 'X') {
            dead++; /* a zombie main thread */
            continue;
        }
        survey_add(&sv, tids[i], &ts);
        if (in_vfork_st(pid, tids[i], &ts, &c)) {
            waiting++;
            if (!child)
                child = c;
        }
    }
    free(tids);
    /* A thread seen as odd may have been read as it was starting or
     * ending (thread churn): it counts only if a second read, now, still
     * finds it alive and different (rel_attach_while, mode threads). */
    if (sv.odd_tid) {
        struct inj_target_status os;

        if (inj_target_status(sv.odd_tid, &os) || os.state == 'Z' || os.state == 'X' ||
            os.seccomp < 0 ||
            (os.seccomp == sv.ref_mode && os.seccomp_filters == sv.ref_filters))
            sv.odd_tid = 0;
    }
    if (waiting > 0 && waiting == n - dead) {
        char who[96] = "its child";

        if (child > 0 && inj_target_status(child, &ps) == 0)
            snprintf(who, sizeof(who), "its child pid %d (%s)", (int)child, ps.comm);
        return inj_err(err, errlen, INJ_ESTATE,
                       "pid %d (%s) waits in vfork() for %s to exec or exit; until then no "
                       "thread of it can run any code (uninterruptible sleep), and its memory is "
                       "the child's. Nothing was done; retry once the child has exec'd or exited",
                       (int)pid, st->comm, who);
    }
    return inj_seccomp_survey_refusal(pid, &sv, err, errlen);
}

int inj_check_target(pid_t pid, char *err, size_t errlen)
{
    return inj_check_target_state(pid, true, err, errlen);
}

int inj_check_target_state(pid_t pid, bool program, char *err, size_t errlen)
{
    int r = check_target(pid, program, err, errlen);

    /* A process that exits while we read /proc looks statically linked,
     * unreadable or foreign: say what really happened. */
    if (r != INJ_OK && r != INJ_ENOPROC && r != INJ_EEXITED && inj_target_live_task(pid) < 0)
        r = inj_err(err, errlen, INJ_ENOPROC, "pid %d exited while heapinject was looking at it",
                    (int)pid);
    return r;
}

static int check_target(pid_t pid, bool program, char *err, size_t errlen)
{
    struct inj_target_status st, tr;
    struct inj_elf_info info;
    struct inj_elf *elf;
    struct inj_maps maps;
    char path[64];
    int r, fd;
    bool has_libc;
    pid_t rep;

    if (pid <= 0)
        return inj_err(err, errlen, INJ_ENOPROC, "invalid pid %d", (int)pid);
    r = inj_target_status(pid, &st);
    if (r == -ENOENT || r == -ESRCH)
        return inj_err(err, errlen, INJ_ENOPROC, "no such process: pid %d", (int)pid);
    if (r)
        return inj_err(err, errlen, r == -EACCES ? INJ_EPERM : INJ_EINTERNAL,
                       "reading /proc/%d/status: %s", (int)pid, strerror(-r));
    if (st.tgid > 0 && st.tgid != pid) {
        struct inj_target_status ps;

        if (inj_target_status(st.tgid, &ps))
            snprintf(ps.comm, sizeof(ps.comm), "?");
        return inj_err(err, errlen, INJ_ENOTPROCESS,
                       "%d is a thread (%s) of process %d (%s), not a process: heapinject "
                       "profiles a whole process; use -p %d", (int)pid, st.comm, (int)st.tgid,
                       ps.comm, (int)st.tgid);
    }
    /* pid's status was just read: alive unless a zombie, else find a live
     * thread (inj_target_live_task reads it again). */
    rep = st.state != 'Z' && st.state != 'X' ? pid : inj_target_live_task(pid);
    if (rep < 0)
        return inj_err(err, errlen, INJ_ENOPROC, "pid %d (%s) has exited (zombie)", (int)pid,
                       st.comm);
    if (!inj_target_may_trace(&st))
        return inj_err(err, errlen, INJ_EPERM,
                       "pid %d (%s) belongs to uid %u and we are uid %u without "
                       "CAP_SYS_PTRACE: %s", (int)pid, st.comm, st.uid[1], geteuid(),
                       perm_hint());
    if (st.tracer) {
        if (inj_target_status(st.tracer, &tr))
            snprintf(tr.comm, sizeof(tr.comm), "?");
        return inj_err(err, errlen, INJ_ETRACED,
                       "pid %d (%s) is already traced by pid %d (%s); a process can have "
                       "only one tracer: detach or stop %s first", (int)pid, st.comm,
                       (int)st.tracer, tr.comm, tr.comm);
    }

    r = check_state(pid, rep, &st, err, errlen);
    if (r || !program)
        return r;

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)rep);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r = errno;
        if (r == EACCES || r == EPERM)
            return inj_err(err, errlen, INJ_EPERM, "opening %s: %s: %s", path, strerror(r),
                           perm_hint());
        if (r == ENOENT)
            return inj_err(err, errlen, INJ_ENOPROC, "pid %d (%s) has exited or is a kernel "
                           "thread", (int)pid, st.comm);
        return inj_err(err, errlen, INJ_EINTERNAL, "opening %s: %s", path, strerror(r));
    }
    r = inj_elf_open(fd, &elf);
    if (r)
        return inj_err(err, errlen, INJ_EARCH, "pid %d (%s) does not run an ELF program",
                       (int)pid, st.comm);
    r = inj_elf_info(elf, &info);
    inj_elf_close(elf);
    if (r)
        return inj_err(err, errlen, INJ_EARCH, "pid %d (%s): unreadable ELF header", (int)pid,
                       st.comm);
    if (info.machine != EM_X86_64 || info.elf_class != ELFCLASS64)
        return inj_err(err, errlen, INJ_EARCH,
                       "pid %d (%s) is built for %s; heapinject injects into x86-64 "
                       "programs only", (int)pid, st.comm,
                       inj_elf_machine_name(info.machine, info.elf_class));

    /* A dynamically linked program that has just exec'd has no libc
     * mapped until its loader gets there (milliseconds): wait up to 1 s
     * for it rather than call it foreign. */
    for (int tries = 0;; tries++) {
        r = inj_maps_read(rep, &maps);
        if (r)
            return inj_err(err, errlen, r == -EACCES ? INJ_EPERM : INJ_ENOPROC,
                           "reading /proc/%d/maps: %s", (int)pid, strerror(-r));
        has_libc = inj_maps_find_module(&maps, inj_maps_is_libc) != NULL;
        inj_maps_free(&maps);
        if (has_libc || !info.has_interp || tries >= 50)
            break;
        inj_sleep_us(20000);
        if ((rep = inj_target_live_task(pid)) < 0)
            return inj_err(err, errlen, INJ_ENOPROC, "pid %d exited while heapinject was "
                           "looking at it", (int)pid);
    }
    if (!info.has_interp && !has_libc)
        return inj_err(err, errlen, INJ_ESTATIC,
                       "pid %d (%s) is statically linked: it has no dynamic loader, so no "
                       "library can be loaded into it", (int)pid, st.comm);
    if (!has_libc)
        return inj_err(err, errlen, INJ_ESTATIC,
                       "pid %d (%s) has no glibc libc.so.6 mapped (another C library?); "
                       "nothing to call dlopen in", (int)pid, st.comm);
    return INJ_OK;
}
