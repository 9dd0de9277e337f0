/* census.c - the agent's side of a census: prepare, fork, wait, send.
 * See census.h for the mechanism and docs/DESIGN-NOTES.md for why. */
#include "payload/census.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "payload/allocstats.h"
#include "payload/arena.h"
#include "payload/census_kernel.h"
#include "payload/census_types.h"
#include "payload/census_uncopied.h"
#include "payload/clock.h"
#include "payload/procmaps.h"

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

static void collect_threads(struct pl_census_in *in)
{
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
            if (tid <= 0 || tid == self || in->n_threads == PL_CENSUS_MAX_THREADS)
                continue;
            struct pl_census_thread *t = &in->threads[in->n_threads++];
            memset(t, 0, sizeof(*t));
            t->tid = tid;
            for (unsigned r = 0; r < in->n_regs; r++)
                if (in->regs[r].tid == tid) {
                    t->has_regs = t->has_sp = 1;
                    t->tp = in->regs[r].tp;
                    memcpy(t->gpr, in->regs[r].gpr, sizeof(t->gpr));
                    t->sp = in->regs[r].gpr[7];
                }
            snprintf(path, sizeof(path), "%d/syscall", tid);
            if (!t->has_sp && read_task_file(dir, path, buf, sizeof(buf)) == 0 && parse_sp(buf, &t->sp) == 0)
                t->has_sp = 1;
            snprintf(path, sizeof(path), "%d/comm", tid);
            if (read_task_file(dir, path, buf, sizeof(buf)) == 0) {
                size_t l = strcspn(buf, "\n");
                memcpy(t->name, buf, l < sizeof(t->name) - 1 ? l : sizeof(t->name) - 1);
            }
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

/* The child: nothing of the program's may run in it. Every signal is
 * blocked (a fault then kills it with the default action: no handler of
 * the program's runs), no core is written, the OOM killer picks it first,
 * it dies with the agent thread, and it lets go of the program's files at
 * once (a socket the program closes meanwhile must really close). */
static struct pl_census_out *child_out;

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

static void child_main(const struct pl_census_in *in, struct pl_census_out *out)
{
    uint64_t all = ~0ull & ~((1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1)));
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
    child_out = out;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = child_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_NAME, "heapinject-cen");
    /* The epoll descriptors are the program's instances: read their
     * registrations before letting go of them. */
    if (in->kernel)
        pl_kernel_words_read(in->kernel);
    if (syscall(SYS_close_range, 0u, ~0u, 0u) != 0)
        for (int fd = 0; fd < 65536; fd++)
            close(fd);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, "1000", 4);
        close(fd);
    }
    uint64_t t0 = pl_now_ns();
    pl_census_child(in, out);
    out->end.scan_ns = pl_now_ns() - t0;
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

/* Forks, tells the cli that the copy exists (its stopped threads may go
 * on), waits for the child within the timeout, reaps it. */
static void run_child(struct pl_census_in *in, struct pl_census_out *out, pl_send_fn send, void *ctx)
{
    struct hi_census_end *e = &out->end;
    uint64_t t0 = pl_now_ns();
    long pid = syscall(SYS_clone, 0ul, 0ul, NULL, NULL, 0ul); /* exit signal 0: no SIGCHLD */
    if (pid == 0)
        child_main(in, out);
    e->stall_ns = pl_now_ns() - t0;
    struct hi_census_forked fk = { e->stall_ns };
    int fork_errno = errno; /* before the send below, which may set it */
    if (in->n_regs)
        (void)send(ctx, HI_MSG_CENSUS_FORKED, &fk, sizeof(fk)); /* a lost cli: END fails too */
    if (pid < 0) {
        set_why(e, -fork_errno, "the fork that freezes a copy of the process failed (memory or process limits)");
        return;
    }
    uint64_t deadline = pl_now_ns() + in->timeout_ns;
    /* The threads run again: what the copy lacks is read here while the
     * child walks the heap (census_uncopied.h); it waits for this. */
    if (in->uncopied)
        pl_uncopied_scan(in->uncopied, in->exclude, in->n_exclude, pl_now_ns() + in->timeout_ns / 4);
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof(si));
        int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | __WALL);
        if (r == 0 && si.si_pid == pid)
            break;
        if (r < 0 && errno != EINTR) {
            set_why(e, -errno, "lost the census child");
            return;
        }
        if (pl_now_ns() > deadline) {
            kill((pid_t)pid, SIGKILL);
            while (waitid(P_PID, (id_t)pid, &si, WEXITED | __WALL) < 0 && errno == EINTR)
                ;
            set_why(e, -ETIMEDOUT, "the census took longer than 120 s and was stopped");
            return;
        }
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    if ((si.si_code != CLD_EXITED || si.si_status != 0) && out->end.status == 0) {
        char why[96];
        snprintf(why, sizeof(why), "the census child died (signal %d) while reading the heap", si.si_status);
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

static void prepare(void)
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
    in->mallinfo_free = st.free;
    in->mallinfo_mmapped = st.mmapped;
    dl_iterate_phdr(module_cb, in);
    if (in->tls_lo < 0)
        in->tls_hi = PL_TCB_BYTES;
    uintptr_t lo[32], hi[32];
    unsigned n = pl_arena_ranges(lo, hi, 32);
    for (unsigned i = 0; i < n; i++)
        add_range(in->exclude, &in->n_exclude, 64, lo[i], hi[i]);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0); /* the agent's stack */
    add_range(in->exclude, &in->n_exclude, 64, here, here + 1);
    add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)in, (uintptr_t)in + sizeof(*in));
    add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)out, (uintptr_t)out + PL_CENSUS_OUT_BYTES);
    void *kw = mmap(NULL, sizeof(struct pl_kernel_words), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    in->kernel = kw == MAP_FAILED ? NULL : kw;
    if (in->kernel)
        add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)kw, (uintptr_t)kw + sizeof(struct pl_kernel_words));
    in->uncopied = pl_uncopied_create();
    if (in->uncopied)
        add_range(in->exclude, &in->n_exclude, 64, (uintptr_t)in->uncopied,
                  (uintptr_t)in->uncopied + PL_UNCOPIED_BYTES);
}

int pl_census_prepare_send(pl_send_fn send, void *ctx, const struct hi_census_layout *layout)
{
    prepare();
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

int pl_census_send(pl_send_fn send, void *ctx)
{
    if (!prep.in || pl_now_ns() - prep.at_ns > PL_CENSUS_PREP_TTL_NS)
        prepare(); /* REQ alone (no PREP): nothing is stopped */
    if (prep.end.status < 0) {
        struct hi_census_end end = prep.end;
        pl_census_forget();
        return send_end(send, ctx, &end);
    }
    struct pl_census_in *in = prep.in;
    struct pl_census_out *out = prep.out;
    collect_threads(in);
    out->end = prep.end;
    run_child(in, out, send, ctx);
    int rc = 0;
    if (out->end.status == 0) {
        for (uint32_t i = 0; i < out->n_groups && rc == 0; i++)
            rc = send(ctx, HI_MSG_CENSUS_GROUP, &out->groups[i], sizeof(out->groups[i]));
        for (uint32_t i = 0; i < out->n_roots && rc == 0; i++)
            rc = send(ctx, HI_MSG_CENSUS_ROOT, &out->roots[i], sizeof(out->roots[i]));
    }
    if (rc == 0)
        rc = send_end(send, ctx, &out->end);
    pl_census_forget();
    return rc;
}
