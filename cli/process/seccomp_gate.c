/* seccomp_gate.c - see seccomp_gate.h. */
#include "cli/process/seccomp_gate.h"
#include "cli/process/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/exitcode.h"
#include "common/seccomp_gate.h"
#include "injector/elfsym.h"
#include "injector/maps.h"
#include "injector/mem.h"
#include "injector/ptrace_session.h"
#include "injector/seccomp_eval.h"
#include "injector/seccomp_plan.h"

static __thread struct cli_gate_result last; /* per thread: several attaches at once (cli/session/many.c) */

const struct cli_gate_result *cli_gate_last(void)
{
    return &last;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Address of the gate in pid (the exported symbol of libheapinject.so),
 * cached per pid. 0, -ENOENT (no profiler mapped) or -errno. */
static int find_gate(pid_t pid, uint64_t *addr)
{
    static pid_t cached_pid;
    static uint64_t cached_addr;
    if (cached_pid == pid && cached_addr) {
        *addr = cached_addr;
        return 0;
    }
    struct inj_maps m;
    int r = inj_maps_read(pid, &m);
    if (r < 0)
        return r;
    r = -ENOENT;
    for (size_t i = 0; i < m.n; i++) {
        const struct inj_map *mp = &m.v[i];
        if (!mp->path[0] || !(ends_with(mp->path, "/libheapinject.so") || strstr(mp->path, "libheapinject.so")))
            continue;
        int fd = inj_maps_open_file(pid, mp);
        if (fd < 0) {
            r = fd;
            continue;
        }
        struct inj_elf *elf;
        if ((r = inj_elf_open(fd, &elf)) < 0)
            continue;
        uint64_t value, size, bias;
        if ((r = inj_elf_symbol(elf, HI_GATE_SYMBOL, &value, &size)) == 0 &&
            (r = inj_elf_load_bias(elf, mp->start, mp->offset, &bias)) == 0) {
            cached_pid = pid;
            cached_addr = *addr = value + bias;
        }
        inj_elf_close(elf);
        if (r == 0)
            break;
    }
    inj_maps_free(&m);
    return r;
}

/* Seccomp_filters of thread tid, from outside; -1 when unknown. */
static int thread_filters(pid_t pid, pid_t tid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return -1;
    const char *p = strstr(buf, "\nSeccomp_filters:");
    int v;
    return p && sscanf(p + 17, "%d", &v) == 1 ? v : -1;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Puts back every slot that still holds its hook, through /proc/PID/mem
 * (which writes read-only pages too). Returns how many. */
static unsigned restore_slots(pid_t pid, const struct hi_seccomp_gate *g)
{
    uint32_t n = 0;
    unsigned done = 0;
    if (!g->slots || g->slot_stride < 32 || g->slot_stride > 256 ||
        inj_mem_read(pid, g->nslots_addr, &n, sizeof(n)) < 0 || n > 100000)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char e[256];
        if (inj_mem_read(pid, g->slots + (uint64_t)i * g->slot_stride, e, g->slot_stride) < 0)
            break;
        uint64_t addr, orig, hook, now;
        memcpy(&addr, e + g->off_addr, 8);
        memcpy(&orig, e + g->off_orig, 8);
        memcpy(&hook, e + g->off_hook, 8);
        if (!e[g->off_patched] || !addr)
            continue;
        if (inj_mem_read(pid, addr, &now, 8) < 0 || now != hook)
            continue; /* put back already, or someone else's now */
        if (inj_mem_write(pid, addr, &orig, 8) == 0)
            done++;
    }
    return done;
}

static void add_why(struct cli_gate_result *r, const char *what, int call, uint32_t action)
{
    const struct hi_gate_call *c = call >= 0 ? &hi_gate_calls[call] : NULL;
    char act[64];
    size_t len = strlen(r->why);
    if (c)
        snprintf(r->why + len, sizeof(r->why) - len, "%s%s (the filter answers %s to %s(2))", len ? "; " : "",
                 what, inj_seccomp_action_name(action, act, sizeof(act)), c->name);
    else
        snprintf(r->why + len, sizeof(r->why) - len, "%s%s", len ? "; " : "", what);
}

/* The agent sleeps in a fault on a page of its userfaultfd until that
 * page is filled (common/seccomp_gate.h, version 2): after a verdict,
 * fill the page it waits on, through a copy of its descriptor. A
 * descriptor number the program reused for another file is no
 * userfaultfd and is left alone; a userfaultfd of the program's own
 * has no registration over our page and refuses the fill. */
static void wake_agent(pid_t pid, uint64_t at, const struct hi_seccomp_gate *g)
{
    uint64_t addr = 0;
    char link[64], target[64];
    if (g->version < 2 || g->wait_uffd < 0 ||
        inj_mem_read(pid, at + offsetof(struct hi_seccomp_gate, wait_addr), &addr, sizeof(addr)) < 0 || !addr)
        return;
    snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, g->wait_uffd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    if (strcmp(target, "anon_inode:[userfaultfd]"))
        return;
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0u);
    if (pfd < 0)
        return;
    int ufd = (int)syscall(SYS_pidfd_getfd, pfd, g->wait_uffd, 0u);
    close(pfd);
    if (ufd < 0)
        return;
    struct uffdio_zeropage z = { .range = { addr & ~(uint64_t)4095, 4096 }, .mode = 0 };
    ioctl(ufd, UFFDIO_ZEROPAGE, &z); /* EEXIST: filled already, the agent is on its way */
    close(ufd);
}

/* The first thread of pid whose Seccomp_filters is not `want`, into
 * *tid and *filters; 0 when none (threads gone meanwhile are skipped). */
static int odd_thread(pid_t pid, int want, int *filters)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int tid = 0;
    while (!tid && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        int t = atoi(e->d_name), f = thread_filters(pid, t);
        if (f >= 0 && f != want) {
            tid = t;
            *filters = f;
        }
    }
    closedir(d);
    return tid;
}

/* The agent's own filters are the ones the attach checked, but a thread
 * got filters of its own after attach (no TSYNC): the hooks run there
 * too, and their calls (gettid, rt_sigprocmask, futex, mmap) were never
 * run through its filters. Seen by the agent's scan (gate version 3) or
 * ours now: the slots go back from outside at once (no hook runs from
 * then on, in any thread), the agent is told (it keeps the hooks off for
 * good) and serves on. */
static int settle_odd(pid_t pid, uint64_t at, const struct hi_seccomp_gate *g, struct cli_gate_result *r)
{
    int tid = g->odd_tid, filters = g->odd_filters;
    if (g->version < 3)
        return 0;
    if (!tid && !(tid = odd_thread(pid, g->filters_at_start, &filters))) {
        if (g->version < 4 || !g->sandbox_tid)
            return 0;
        /* A thread called prctl/seccomp through our slot, whose filter is
         * not (yet, or ever: the call failed) in force: the hooks went
         * off before it, for good. */
        r->sealed = r->known = r->thread_only = true;
        r->allowed = HI_GATE_ALL_GROUPS;
        r->restored = restore_slots(pid, g);
        uint32_t total = g->cli_restored + r->restored;
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, cli_restored), &total, sizeof(total));
        snprintf(r->why, sizeof(r->why),
                 "thread %d called prctl or seccomp to install a seccomp filter, so the hooks, which run in every "
                 "thread, went off for good before it took effect: sampling stopped then; the profiler's thread "
                 "keeps the filters the attach checked and still serves status, snapshot and detach",
                 g->sandbox_tid);
        last = *r;
        return 0;
    }
    if (!g->odd_tid) {
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, odd_filters), &filters, sizeof(filters));
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, odd_tid), &tid, sizeof(tid));
    }
    r->sealed = r->known = r->thread_only = true;
    r->allowed = HI_GATE_ALL_GROUPS;
    r->restored = restore_slots(pid, g);
    uint32_t total = g->cli_restored + r->restored;
    inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, cli_restored), &total, sizeof(total));
    snprintf(r->why, sizeof(r->why),
             "thread %d has a filter of its own (no TSYNC: %d filters there, %d in the profiler's thread), so "
             "the hooks, which run in every thread, are off for good: sampling stopped when it was seen; the "
             "profiler's thread keeps the filters the attach checked and still serves status, snapshot and detach",
             tid, filters, g->filters_at_start);
    last = *r;
    return 0;
}

int cli_gate_settle(pid_t pid, struct cli_gate_result *r)
{
    memset(r, 0, sizeof(*r));
    uint64_t at = 0;
    struct hi_seccomp_gate g;
    int rc = find_gate(pid, &at);
    if (rc < 0)
        return rc == -ENOENT ? 0 : rc;
    if ((rc = inj_mem_read(pid, at, &g, sizeof(g))) < 0)
        return rc;
    if (g.magic != HI_GATE_MAGIC || g.version < 1 || g.version > HI_GATE_VERSION || g.agent_tid <= 0)
        return 0;
    if (g.version < 3) /* no odd_tid: what follows the gate is not ours to read as such */
        g.odd_tid = g.odd_filters = 0;
    if (g.version < 4)
        g.sandbox_tid = 0;
    if (g.version < 5)
        g.verdict_by = 0;
    if (!g.sealed) {
        int now = thread_filters(pid, g.agent_tid);
        if (now >= 0 && now == g.filters_at_start)
            return settle_odd(pid, at, &g, r);
        if (now < 0 || g.filters_at_start < 0)
            return 0;
        /* A new filter the agent has not seen yet: it will, at its next
         * look (every 50 ms), and then waits for us in user space, where
         * holding it interrupts no call (a poll restarted under the new
         * filter would be a call it has not been shown to allow). */
        for (int i = 0; i < 200 && !g.sealed; i++) {
            sleep_ms(10);
            if ((rc = inj_mem_read(pid, at, &g, sizeof(g))) < 0)
                return rc;
        }
        if (!g.sealed)
            return 0;
    }
    r->sealed = true;
    int bad[HI_GATE_NGROUPS] = { -1, -1, -1, -1, -1, -1, -1 };
    uint32_t actions[HI_GATE_NGROUPS] = { 0 };
    if (g.verdict_for == g.filters_now) {
        r->known = true;
        r->allowed = g.allowed;
        /* The installing thread's verdict (version 5): what its filter
         * refused, as our own run would have named it. */
        for (int i = 0; g.verdict_by == 1 && i < HI_GATE_NGROUPS; i++)
            if (g.judged_bad[i] >= 0 && (size_t)g.judged_bad[i] < hi_gate_ncalls) {
                bad[i] = g.judged_bad[i];
                actions[i] = g.judged_action[i];
            }
    } else {
        struct inj_thread t;
        uint32_t allowed = 0;
        rc = inj_thread_seize(&t, pid, g.agent_tid);
        if (rc == 0 && (rc = inj_thread_interrupt(&t, 2000)) == 0)
            rc = inj_seccomp_gate_eval(g.agent_tid, &allowed, bad, actions);
        if (t.seized)
            inj_thread_detach(&t);
        r->known = rc == 0;
        r->allowed = r->known ? allowed : 0;
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, allowed), &r->allowed, sizeof(r->allowed));
        if (g.version >= 5) {
            uint32_t by_cli = 0;
            inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, verdict_by), &by_cli, sizeof(by_cli));
        }
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, verdict_for), &g.filters_now, sizeof(g.filters_now));
        wake_agent(pid, at, &g); /* after the verdict: the agent looks at it once awake */
        if (g.version >= 2 && g.wait_uffd < 0 && g.agent_state == HI_GATE_AGENT_WAITING)
            add_why(r, "until this command came its thread spun on one CPU (it has no userfaultfd to sleep on: "
                       "a filter at attach was not shown to allow one)", -1, 0);
        if (!r->known)
            snprintf(r->why, sizeof(r->why),
                     "the new filters cannot be read (%s): the profiler makes no system call any more", strerror(-rc));
    }
    uint32_t a = r->allowed;
    /* Always: once sealed the hooks only forward for good, and an agent
     * that sealed during its detach skipped its own restore. */
    {
        r->restored = restore_slots(pid, &g);
        uint32_t total = g.cli_restored + r->restored;
        inj_mem_write(pid, at + offsetof(struct hi_seccomp_gate, cli_restored), &total, sizeof(total));
    }
    if (r->known) {
        if (!(a & HI_GATE_SERVE))
            add_why(r, "the profiler cannot answer any more: no status, snapshot or detach through it", bad[1],
                    actions[1]);
        if (!(a & HI_GATE_PROC))
            add_why(r, "no RSS figures or memory-pressure snapshots from the profiler", bad[2], actions[2]);
        if (!(a & HI_GATE_MPROTECT))
            add_why(r, "the profiler cannot put the allocator's slots back itself: heapinject did, through /proc/PID/mem",
                    bad[3], actions[3]);
        /* How the agent's thread waits from now on (payload/sys/seccomp_watch.c,
         * pl_seccomp_park): a call the filters allow, else a fault on its
         * userfaultfd, else a spin; said, since a spin costs a CPU. */
        bool uffd = g.version >= 2 && g.wait_uffd >= 0;
        const char *how = (a & HI_GATE_PARK)          ? "asleep"
                          : (a & HI_GATE_SLEEP_FUTEX) ? "asleep in a futex wait"
                          : (a & HI_GATE_SLEEP_PAUSE) ? "asleep in pause(2)"
                          : uffd                      ? "asleep in a page fault"
                                                      : "spinning on one CPU: the filters allow no way to sleep "
                                                        "(poll, futex, pause) and it has no userfaultfd";
        char stays[256];
        if (!(a & HI_GATE_LEAVE)) {
            snprintf(stays, sizeof(stays), "its tables stay mapped and its thread stays, %s", how);
            add_why(r, stays, bad[4], actions[4]);
        } else if (!(a & HI_GATE_SERVE)) {
            snprintf(stays, sizeof(stays), "its thread stays, %s", how);
            add_why(r, stays, -1, 0);
        }
    }
    add_why(r, "no census; sampling stopped when the filter came", -1, 0);
    last = *r;
    return 0;
}

int cli_gate_say(pid_t pid)
{
    if (!last.sealed)
        return 0;
    fprintf(stderr, "heapinject: pid %d installed a seccomp filter after attach; %s: %s%s%s.\n", (int)pid,
            last.thread_only ? "the profiler's hooks make no system call any more"
                             : "the profiler makes no system call the filter has not been shown to allow",
            last.why,
            last.restored ? "; the allocator's slots were put back from outside, the process runs without hooks" : "",
            cli_gate_serves(&last) ? "" : "; nothing else was done, the process runs on");
    return CLI_EXIT_UNSUPPORTED;
}

int cli_gate_exit(pid_t pid, int code)
{
    if (!last.sealed)
        return code;
    cli_gate_say(pid);
    return code == CLI_EXIT_OK ? CLI_EXIT_UNSUPPORTED : code;
}
