/* census.c - the agent's side of a census: prepare, fork, wait, send.
 * See census.h for the mechanism and docs/DESIGN-NOTES.md for why. */
#include "payload/census/census.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "payload/interpose/interpose.h"
#include "payload/sys/sys.h"
#include "payload/census/kernel.h"
#include "payload/census/types.h"
#include "payload/census/uncopied.h"

#define CENSUS_TIMEOUT_NS (120ull * 1000000000ull)

static void add_range(struct pl_census_range *a, unsigned *n, unsigned max, uintptr_t lo, uintptr_t hi)
{
    if (*n < max && hi > lo) {
        a[*n].lo = lo;
        a[*n].hi = hi;
        (*n)++;
    }
}

/* sizeof(struct pthread), the TCB at the thread pointer, is about 2.3 KiB
 * in glibc 2.34 to 2.41 on x86_64 (libthread_db's
 * _thread_db_sizeof_pthread); it holds the dtv and pthread_setspecific's
 * values. Scanned up to the end of its mapping at most. */
#define PL_TCB_BYTES 2304

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct pl_census_in *in = data;
    for (int i = 0; i < info->dlpi_phnum; i++) /* static TLS: dlpi_tls_data is this thread's block */
        if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_tls_data) {
            intptr_t off = (intptr_t)info->dlpi_tls_data - (intptr_t)thread_pointer();
            if (off < in->tls_lo && off > -(intptr_t)(64 << 20))
                in->tls_lo = off;
        }
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    int ours = 0, libc = strstr(name, "/libc.so") != NULL || !strncmp(name, "libc.so", 7);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)&module_cb >= lo && (uintptr_t)&module_cb < lo + ph->p_memsz)
            ours = 1;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ours) {
            add_range(in->exclude, &in->n_exclude, 64, lo, hi);
            continue;
        }
        add_range(in->images, &in->n_images, PL_CENSUS_MAX_RANGES, lo, hi);
        if (ph->p_flags & PF_W) {
            add_range(in->globals, &in->n_globals, PL_CENSUS_MAX_RANGES, lo, hi);
            if (libc)
                add_range(in->libc_data, &in->n_libc_data, 8, lo, hi);
        }
    }
    return 0;
}

/* Reads a small /proc/self/task/TID file into buf (NUL-terminated). */
static int read_task_file(int task_dir, const char *path, char *buf, size_t len)
{
    int fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, len - 1);
    close(fd);
    if (r < 0)
        return -1;
    buf[r] = '\0';
    return 0;
}

/* "NR a1 a2 a3 a4 a5 a6 SP PC" (in a system call) or "-1 SP PC" (blocked
 * outside one): the second-to-last field. "running": unknown. */
static int parse_sp(const char *s, uintptr_t *sp)
{
    const char *f[10];
    int n = 0;
    for (const char *p = s; *p && n < 10;) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            break;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\n')
            p++;
    }
    if (n < 3 || strncmp(f[n - 2], "0x", 2))
        return -1;
    uintptr_t v = 0;
    for (const char *p = f[n - 2] + 2; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
        v = v * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    *sp = v;
    return v ? 0 : -1;
}

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

#define PL_CENSUS_SP_RETRIES 20 /* 1 ms apart */

/* The cli's registers in tid order (a shell sort: no memory, no libc
 * call that may allocate), so that each thread finds its own by bisection:
 * a search of all for each thread was 10,001 x 10,001 compares while the
 * threads are held. */
static void sort_regs(struct pl_census_in *in)
{
    static const unsigned gaps[] = { 3905, 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
    for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
        for (unsigned i = gaps[g]; i < in->n_regs; i++) {
            struct hi_census_regs r = in->regs[i];
            unsigned j = i;
            for (; j >= gaps[g] && in->regs[j - gaps[g]].tid > r.tid; j -= gaps[g])
                in->regs[j] = in->regs[j - gaps[g]];
            in->regs[j] = r;
        }
}

static const struct hi_census_regs *regs_of(const struct pl_census_in *in, int tid)
{
    unsigned lo = 0, hi = in->n_regs;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (in->regs[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < in->n_regs && in->regs[lo].tid == tid ? &in->regs[lo] : NULL;
}

/* Each thread's tid in the dirent stream of /proc/PID/task (dir), ours
 * excepted, to each(in, tid). */
static void each_task(int dir, struct pl_census_in *in, void (*each)(struct pl_census_in *, int, int))
{
    pid_t self = (pid_t)syscall(SYS_gettid);
    char dents[4096];
    lseek(dir, 0, SEEK_SET);
    for (;;) {
        long n = syscall(SYS_getdents64, dir, dents, sizeof(dents));
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(dents + off);
            off += d->d_reclen;
            int tid = 0;
            for (const char *p = d->d_name; *p >= '0' && *p <= '9'; p++)
                tid = tid * 10 + (*p - '0');
            if (tid > 0 && tid != self)
                each(in, dir, tid);
        }
    }
}

static void read_name(int dir, int tid, char *name, size_t len)
{
    char path[32], buf[64];
    snprintf(path, sizeof(path), "%d/comm", tid);
    if (read_task_file(dir, path, buf, sizeof(buf)) == 0) {
        size_t l = strcspn(buf, "\n");
        memcpy(name, buf, l < len - 1 ? l : len - 1);
    }
}

static void add_name(struct pl_census_in *in, int dir, int tid)
{
    if (in->n_names == PL_CENSUS_MAX_THREADS)
        return;
    struct pl_census_name *n = &in->names[in->n_names++];
    memset(n, 0, sizeof(*n));
    n->tid = tid;
    read_name(dir, tid, n->name, sizeof(n->name));
}

/* The threads' names, at PREP (the threads run): sorted by tid. */
static void read_names(struct pl_census_in *in)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)getpid());
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    each_task(dir, in, add_name);
    close(dir);
    static const unsigned gaps[] = { 3905, 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
    for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
        for (unsigned i = gaps[g]; i < in->n_names; i++) {
            struct pl_census_name x = in->names[i];
            unsigned j = i;
            for (; j >= gaps[g] && in->names[j - gaps[g]].tid > x.tid; j -= gaps[g])
                in->names[j] = in->names[j - gaps[g]];
            in->names[j] = x;
        }
}

static const char *name_of(const struct pl_census_in *in, int tid)
{
    unsigned lo = 0, hi = in->n_names;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (in->names[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < in->n_names && in->names[lo].tid == tid ? in->names[lo].name : NULL;
}

static void collect_threads(struct pl_census_in *in)
{
    sort_regs(in);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)getpid());
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    pid_t self = (pid_t)syscall(SYS_gettid);
    char dents[4096], buf[256];
    for (;;) {
        long n = syscall(SYS_getdents64, dir, dents, sizeof(dents));
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(dents + off);
            off += d->d_reclen;
            int tid = 0;
            for (const char *p = d->d_name; *p >= '0' && *p <= '9'; p++)
                tid = tid * 10 + (*p - '0');
            if (tid <= 0 || tid == self)
                continue;
            if (in->n_threads == PL_CENSUS_MAX_THREADS) { /* counted, so that the report says so */
                in->n_threads_unlisted++;
                continue;
            }
            struct pl_census_thread *t = &in->threads[in->n_threads++];
            memset(t, 0, sizeof(*t));
            t->tid = tid;
            const struct hi_census_regs *r = regs_of(in, tid);
            if (r) {
                t->has_regs = t->has_sp = 1;
                t->tp = r->tp;
                memcpy(t->gpr, r->gpr, sizeof(t->gpr));
                t->sp = r->gpr[7];
            }
            snprintf(path, sizeof(path), "%d/syscall", tid);
            if (!t->has_sp && read_task_file(dir, path, buf, sizeof(buf)) == 0 && parse_sp(buf, &t->sp) == 0)
                t->has_sp = 1;
            const char *name = name_of(in, tid); /* read at PREP; one begun since: now */
            if (name)
                memcpy(t->name, name, sizeof(t->name));
            else
                read_name(dir, tid, t->name, sizeof(t->name));
        }
    }
    /* "running" is also a thread that is runnable but waits for a CPU (a
     * sleeper just woken on a busy machine): most threads block again
     * within a few milliseconds. Without its stack pointer a thread's
     * stack is still scanned, whole, but is not named as its stack. */
    for (int round = 0; round < PL_CENSUS_SP_RETRIES; round++) {
        int missing = 0;
        for (unsigned i = 0; i < in->n_threads; i++) {
            struct pl_census_thread *t = &in->threads[i];
            if (t->has_sp)
                continue;
            snprintf(path, sizeof(path), "%d/syscall", t->tid);
            if (read_task_file(dir, path, buf, sizeof(buf)) == 0 && parse_sp(buf, &t->sp) == 0)
                t->has_sp = 1;
            else
                missing++;
        }
        if (!missing)
            break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    close(dir);
}

/* A seccomp filter may answer a fork with death: a census then is not
 * taken (the profile itself needs no fork). */
static int under_seccomp_filter(void)
{
    int fd = pl_proc_open_self("status");
    if (fd < 0)
        return 0;
    char buf[4096];
    ssize_t r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return 0;
    buf[r] = '\0';
    const char *s = strstr(buf, "\nSeccomp:");
    return s && strtol(s + 9, NULL, 10) == 2;
}

/* The child: nothing of the program's may run in it, and the program
 * must not see it (issue 25).
 *
 * - Its parent is the program's parent (CLONE_PARENT), not the program: a
 *   program's waitpid(-1, __WALL) or waitid(P_ALL, __WALL) reaped the copy
 *   when it was the agent's child (2 and 3 censuses in 5), and a process
 *   can reap only its own children. The program's parent gets it (with the
 *   program's own exit signal) as one more child that ends: a shell, init
 *   or a supervisor reaps it. The agent follows it through a pidfd. A
 *   namespace's init cannot make a sibling (EINVAL): its copy is its own
 *   child as before, exit signal 0 (only __WALL or __WCLONE waits see it).
 * - It holds none of the program's descriptors, not even for a moment: it
 *   shares the program's descriptor table (CLONE_FILES) until its first
 *   system call replaces it with an empty one (close_range with
 *   CLOSE_RANGE_UNSHARE over every descriptor copies none). A copy of the
 *   table kept a listening port bound for the program (EADDRINUSE on a
 *   re-bind, 18 times in 3 censuses of a process with 18k descriptors).
 * - It dies when the agent goes or the census ends: a 20 ms timer checks
 *   a pidfd of the agent thread (the program exited or exec'd) and the
 *   census's deadline; the agent kills it when the cli goes.
 * - Every signal but those is blocked (a fault then kills it with the
 *   default action: no handler of the program's runs), no core is written,
 *   the OOM killer picks it first. */
static struct pl_census_out *child_out;
static int child_agent_pidfd = -1;
static uint64_t child_deadline_ns;
static pid_t census_target_pid, census_agent_tid; /* set before the clone */

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define PL_CENSUS_WATCH_US 20000

/* A fault in the child (a page it should not have read) ends the census
 * with where it happened; the handler is the child's own. */
static void child_fault(int sig, siginfo_t *si, void *uc)
{
    const ucontext_t *u = uc;
    if (child_out) {
        child_out->end.status = -EFAULT;
        snprintf(child_out->end.why, sizeof(child_out->end.why),
                 "the census copy faulted (signal %d) reading 0x%lx at pc 0x%llx", sig, (unsigned long)si->si_addr,
                 (unsigned long long)u->uc_mcontext.gregs[REG_RIP]);
    }
    syscall(SYS_exit_group, 3);
}

/* The child's watchdog (SIGALRM every 20 ms): the agent thread gone, or
 * the census's time up, ends the copy. */
static void child_watch(int sig)
{
    (void)sig;
    struct pollfd p = { child_agent_pidfd, POLLIN, 0 };
    if ((child_agent_pidfd >= 0 && poll(&p, 1, 0) > 0) || pl_now_ns() > child_deadline_ns)
        syscall(SYS_exit_group, 4);
}

/* The agent thread (or, on kernels before 6.9, the process) as a pidfd:
 * readable once it has exited. */
static int open_agent_pidfd(void)
{
    int fd = (int)syscall(SYS_pidfd_open, census_agent_tid, PIDFD_THREAD);
    if (fd < 0)
        fd = (int)syscall(SYS_pidfd_open, census_target_pid, 0);
    return fd;
}

static void child_main(const struct pl_census_in *in, struct pl_census_out *out)
{
    /* First, before anything else: an own, empty descriptor table. */
    if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) {
        syscall(SYS_unshare, CLONE_FILES);
        for (int fd = 0; fd < 65536; fd++)
            close(fd);
    }
    uint64_t all = ~0ull & ~((1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1)) | (1ull << (SIGALRM - 1)));
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
    child_out = out;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = child_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_NAME, "heapinject-cen");
    child_deadline_ns = pl_now_ns() + in->timeout_ns;
    child_agent_pidfd = open_agent_pidfd();
    if (child_agent_pidfd < 0 && syscall(SYS_kill, census_target_pid, 0) != 0)
        syscall(SYS_exit_group, 4); /* gone already */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = child_watch;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, PL_CENSUS_WATCH_US }, { 0, PL_CENSUS_WATCH_US } };
    setitimer(ITIMER_REAL, &it, NULL);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, "1000", 4);
        close(fd);
    }
    uint64_t t0 = pl_now_ns();
    pl_census_child(in, out);
    uint64_t took = pl_now_ns() - t0;
    out->end.scan_ns = took ? took : 1; /* non-zero: the copy finished */
    syscall(SYS_exit_group, 0);
    for (;;)
        ;
}

static int send_end(pl_send_fn send, void *ctx, struct hi_census_end *e)
{
    return send(ctx, HI_MSG_CENSUS_END, e, sizeof(*e));
}

static void set_why(struct hi_census_end *e, int status, const char *why)
{
    e->status = status;
    snprintf(e->why, sizeof(e->why), "%s", why);
}

/* The copy, as a sibling of the program (its parent's child), or as the
 * agent's own child when the program is a namespace's init. *pidfd is
 * the copy's. 0 in the child; its pid in the agent; -1 (errno) when no
 * fork could be made. */
static long clone_copy(int *pidfd, int *own_child)
{
    census_target_pid = getpid();
    census_agent_tid = (pid_t)syscall(SYS_gettid);
    *own_child = 0;
    long pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | CLONE_FILES | CLONE_PIDFD), 0ul, pidfd, NULL, 0ul);
    if (pid >= 0 || errno != EINVAL)
        return pid;
    *own_child = 1; /* exit signal 0: no SIGCHLD */
    return syscall(SYS_clone, (unsigned long)(CLONE_FILES | CLONE_PIDFD), 0ul, pidfd, NULL, 0ul);
}

/* The cli's connection is gone (it was killed): nobody waits for this
 * census. */
static int peer_gone(int peer_fd)
{
    if (peer_fd < 0)
        return 0;
    struct pollfd p = { peer_fd, POLLRDHUP, 0 };
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Ends the copy now and waits until it is gone (reaps it when it is ours). */
static void kill_copy(long pid, int pidfd, int own_child)
{
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    if (own_child) {
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | __WALL) < 0 && errno == EINTR)
            ;
        return;
    }
    struct pollfd p = { pidfd, POLLIN, 0 };
    while (poll(&p, 1, 1000) < 0 && errno == EINTR)
        ;
}

/* Clones the copy, tells the cli that it exists (its stopped threads may
 * go on), waits for it within the timeout (killing it when the cli goes),
 * reaps it when it is the agent's own child. */
static void run_child(struct pl_census_in *in, struct pl_census_out *out, pl_send_fn send, void *ctx, int peer_fd)
{
    struct hi_census_end *e = &out->end;
    uint64_t t0 = pl_now_ns();
    int pidfd = -1, own_child = 0;
    e->scan_ns = 0;
    /* The copy reads our tables (the sampled blocks, their stacks): no
     * table is emptied in this one fork (arena.h). */
    pl_arena_keep_on_fork(true);
    long pid = clone_copy(&pidfd, &own_child);
    if (pid == 0)
        child_main(in, out);
    e->stall_ns = pl_now_ns() - t0;
    struct hi_census_forked fk = { e->stall_ns };
    int fork_errno = errno; /* before the send below, which may set it */
    if (in->n_regs)
        (void)send(ctx, HI_MSG_CENSUS_FORKED, &fk, sizeof(fk)); /* a lost cli: END fails too */
    pl_arena_keep_on_fork(false); /* the program runs again: not in its stall */
    if (pid < 0) {
        set_why(e, -fork_errno, "the fork that freezes a copy of the process failed (memory or process limits)");
        return;
    }
    uint64_t deadline = pl_now_ns() + in->timeout_ns;
    /* The threads run again: what the copy lacks is read here while the
     * child walks the heap (census_uncopied.h); it waits for this. */
    if (in->uncopied)
        pl_uncopied_scan(in->uncopied, in->exclude, in->n_exclude, pl_now_ns() + in->timeout_ns / 4);
    for (;;) {
        struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { peer_fd, POLLRDHUP, 0 } };
        int r = poll(p, peer_fd >= 0 ? 2 : 1, 100);
        if (r < 0 && errno != EINTR) {
            int err = errno;
            kill_copy(pid, pidfd, own_child);
            close(pidfd);
            set_why(e, -err, "lost the census child");
            return;
        }
        if (r > 0 && (p[0].revents & POLLIN))
            break;
        if (peer_gone(peer_fd)) {
            kill_copy(pid, pidfd, own_child);
            close(pidfd);
            set_why(e, -ECONNRESET, "the cli went away; the census was stopped");
            return;
        }
        if (pl_now_ns() > deadline) {
            kill_copy(pid, pidfd, own_child);
            close(pidfd);
            set_why(e, -ETIMEDOUT, "the census took longer than 120 s and was stopped");
            return;
        }
    }
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (own_child)
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | __WALL) < 0 && errno == EINTR)
            ;
    close(pidfd);
    if (e->scan_ns == 0 && out->end.status == 0) {
        char why[96];
        if (own_child && si.si_code != CLD_EXITED)
            snprintf(why, sizeof(why), "the census child died (signal %d) while reading the heap", si.si_status);
        else
            snprintf(why, sizeof(why), "the census child died (killed) while reading the heap");
        set_why(e, -EFAULT, why);
    }
}

/* What the first step (CENSUS_PREP) readies, so that the second (REGS,
 * REQ) calls nothing that takes a lock: between the two the cli holds the
 * program's threads stopped, and one may hold malloc's arena lock
 * (mallinfo2) or the loader's (dl_iterate_phdr). Agent thread only. */
static struct {
    struct pl_census_in *in;
    struct pl_census_out *out;
    struct hi_census_end end; /* status < 0: no census can be taken */
    uint64_t at_ns;
} prep;

#define PL_CENSUS_PREP_TTL_NS (30ull * 1000000000ull)

void pl_census_forget(void)
{
    if (prep.in) {
        pl_uncopied_destroy(prep.in->uncopied);
        if (prep.in->kernel)
            munmap(prep.in->kernel, sizeof(*prep.in->kernel));
        munmap(prep.in, sizeof(*prep.in));
    }
    if (prep.out)
        munmap(prep.out, PL_CENSUS_OUT_BYTES);
    memset(&prep, 0, sizeof(prep));
}

static void prepare(size_t agent_stack_bytes)
{
    pl_census_forget();
    prep.at_ns = pl_now_ns();
    struct hi_census_end *end = &prep.end;
    struct hi_alloc_stats st;
    pl_allocstats_read(&st);
    end->allocator = st.allocator;
    if (st.allocator != HI_ALLOC_GLIBC) {
        static const char *names[] = { "an allocator heapinject does not know", "glibc", "jemalloc", "tcmalloc",
                                       "mimalloc" };
        char why[sizeof(end->why)];
        snprintf(why, sizeof(why), "census supports glibc malloc; this process uses %s",
                 names[st.allocator < 5 ? st.allocator : 0]);
        set_why(end, -ENOTSUP, why);
        return;
    }
    if (under_seccomp_filter()) {
        set_why(end, -EPERM, "the process runs under a seccomp filter, which may forbid the fork a census "
                             "takes: no census was taken");
        return;
    }
    struct pl_census_in *in = mmap(NULL, sizeof(*in), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct pl_census_out *out = mmap(NULL, PL_CENSUS_OUT_BYTES, PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    prep.in = in == MAP_FAILED ? NULL : in;
    prep.out = out == MAP_FAILED ? NULL : out;
    if (!prep.in || !prep.out) {
        pl_census_forget();
        set_why(end, -ENOMEM, "no memory for a census");
        return;
    }
    in->timeout_ns = CENSUS_TIMEOUT_NS;
    read_names(in);
    in->mallinfo_free = st.free;
    in->mallinfo_mmapped = st.mmapped;
    dl_iterate_phdr(module_cb, in);
    if (in->tls_lo < 0)
        in->tls_hi = PL_TCB_BYTES;
    uintptr_t lo[32], hi[32];
    unsigned n = pl_arena_ranges(lo, hi, 32);
    for (unsigned i = 0; i < n; i++)
        add_range(in->exclude, &in->n_exclude, 64, lo[i], hi[i]);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095; /* the agent's stack */
    in->agent_stack.lo = here > agent_stack_bytes + 65536 ? here - agent_stack_bytes - 65536 : 0;
    in->agent_stack.hi = here + agent_stack_bytes + 65536;
#if defined(__x86_64__)
    in->agent_dtv = ((const uintptr_t *)__builtin_thread_pointer())[1]; /* tcbhead_t: tcb, dtv */
#endif
    add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)in, (uintptr_t)in + sizeof(*in));
    add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)out, (uintptr_t)out + PL_CENSUS_OUT_BYTES);
    void *kw = mmap(NULL, sizeof(struct pl_kernel_words), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    in->kernel = kw == MAP_FAILED ? NULL : kw;
    if (!in->kernel) {
        pl_census_forget();
        set_why(end, -ENOMEM, "no memory for a census");
        return;
    }
    add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)kw, (uintptr_t)kw + sizeof(struct pl_kernel_words));
    char why[sizeof(end->why)];
    if (pl_kernel_fds_scan(in->kernel, why, sizeof(why)) < 0) {
        pl_census_forget();
        set_why(end, -EPERM, why);
        return;
    }
    pl_pycensus_prepare(&in->py);
    in->uncopied = pl_uncopied_create();
    if (in->uncopied)
        add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)in->uncopied,
                  (uintptr_t)in->uncopied + PL_UNCOPIED_BYTES);
}

int pl_census_prepare_send(pl_send_fn send, void *ctx, const struct hi_census_layout *layout,
                           size_t agent_stack_bytes)
{
    prepare(agent_stack_bytes);
    if (prep.in && layout) {
        prep.in->layout = *layout;
        prep.in->have_layout = 1;
    }
    if (prep.end.status < 0) {
        struct hi_census_end end = prep.end;
        pl_census_forget();
        return send_end(send, ctx, &end);
    }
    struct hi_census_ready r = { (int32_t)syscall(SYS_gettid), 0 };
    return send(ctx, HI_MSG_CENSUS_READY, &r, sizeof(r));
}

void pl_census_add_regs(const struct hi_census_regs *r)
{
    if (prep.in && prep.in->n_regs < PL_CENSUS_MAX_THREADS && r->tid > 0)
        prep.in->regs[prep.in->n_regs++] = *r;
}

int pl_census_send(pl_send_fn send, void *ctx, int peer_fd, size_t agent_stack_bytes)
{
    if (!prep.in || pl_now_ns() - prep.at_ns > PL_CENSUS_PREP_TTL_NS)
        prepare(agent_stack_bytes); /* REQ alone (no PREP): nothing is stopped */
    if (prep.end.status < 0) {
        struct hi_census_end end = prep.end;
        pl_census_forget();
        return send_end(send, ctx, &end);
    }
    struct pl_census_in *in = prep.in;
    struct pl_census_out *out = prep.out;
    collect_threads(in);
    /* The epoll registrations, the program's threads held: the copy has
     * none of its descriptors to read them from. */
    if (in->kernel)
        pl_kernel_words_read(in->kernel);
    out->end = prep.end;
    run_child(in, out, send, ctx, peer_fd);
    int rc = 0;
    if (out->end.status == 0) {
        for (uint32_t i = 0; i < out->n_groups && rc == 0; i++)
            rc = send(ctx, HI_MSG_CENSUS_GROUP, &out->groups[i], sizeof(out->groups[i]));
        for (uint32_t i = 0; i < out->n_roots && rc == 0; i++)
            rc = send(ctx, HI_MSG_CENSUS_ROOT, &out->roots[i], sizeof(out->roots[i]));
        if (in->py.type_type && rc == 0)
            rc = send(ctx, HI_MSG_CENSUS_PYTHON, &out->py.sum, sizeof(out->py.sum));
        for (uint32_t i = 0; in->py.type_type && i < out->py.sum.types && rc == 0; i++)
            rc = send(ctx, HI_MSG_CENSUS_PYTYPE, &out->py.types[i], sizeof(out->py.types[i]));
    }
    if (rc == 0)
        rc = send_end(send, ctx, &out->end);
    pl_census_forget();
    return rc;
}
