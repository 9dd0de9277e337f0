/* seccomp_watch.c - a seccomp filter installed after attach (see
 * seccomp_watch.h and common/seccomp_gate.h).
 *
 * Filters are checked once, at attach (injector/seccomp_plan.c). A program
 * that sandboxes itself later (a TSYNC filter that kills openat, mprotect
 * or madvise) used to die of SIGSYS at the agent's next /proc read, its
 * detach's mprotect or madvise, or its time-to-live (issue 25). The agent
 * now reads its own Seccomp_filters through a descriptor it opened at
 * start (a pread needs no openat) before every round of work, and a new
 * filter seals the session: hooks off, no system call until a cli, which
 * can read filters through ptrace, says which calls are allowed. The two
 * calls made under a filter not yet known are the poll the agent was
 * sleeping in when it came and the pread that sees it; nothing else.
 */
#include "payload/sys/seccomp_watch.h"
#include "payload/sys/clock.h"
#include "payload/sys/procmaps.h"
#include "payload/sys/pid.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>


__attribute__((visibility("default"))) struct hi_seccomp_gate heapinject_seccomp_gate;

#define GATE heapinject_seccomp_gate

/* Agent thread only. */
static int status_fd = -1;
static bool verdict_in(void);
static int wait_fd = -1;          /* the userfaultfd a sealed agent sleeps on (seccomp_gate.h) */
static uint8_t *wait_pages;       /* WAIT_PAGES registered pages, each filled once by a cli */
static unsigned wait_next;        /* the next page not filled yet */
#define WAIT_PAGES 64u
static int agent_tid, agent_pid;
static char status_buf[4096];
static int task_fd = -1;          /* /proc/self/task, for the other threads' counts */
static bool task_open_later;      /* a fork child's: opened at its first scan */
static uint64_t next_scan_ns;     /* when the next scan of the other threads is due */
#define SCAN_GAP_NS 500000000ull  /* between two scans at least */
static uint64_t last_scan_ns;     /* when the last one ended */
static __thread int on_agent __attribute__((tls_model("initial-exec")));

/* When the agent last read its status (0: not yet), and the count of
 * installs through our slots it had seen then (agent thread only); that
 * count, raised by each installer (pl_seccomp_hold_agent, any thread). */
static uint64_t peek_read_ns;
static unsigned peek_read_holds, holds_begun;
/* HI_GATE_* groups the filters in force at start allow (all with no
 * filter; the injector's "gate" with some); -1 not known. */
static int64_t start_groups = -1;

/* The number after "\nKEY:\t" in s, or -1. */
static int field(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p)
        return -1;
    p += strlen(key);
    while (*p == '\t' || *p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    int v = 0;
    for (; *p >= '0' && *p <= '9' && v < 1000000; p++)
        v = v * 10 + (*p - '0');
    return v;
}

/* Seccomp_filters of the agent thread now; -1 when the kernel has no such
 * line (older than 5.9: then mode 2 with no filter at start counts as
 * one); -2 when the descriptor no longer reads as this thread's status
 * (the program closed it, or another file took its number). */
static int read_filters(void)
{
    if (status_fd < 0)
        return -2;
    ssize_t n = pread(status_fd, status_buf, sizeof(status_buf) - 1, 0);
    if (n <= 0)
        return -2;
    status_buf[n] = '\0';
    if (strncmp(status_buf, "Name:", 5) != 0 || field(status_buf, "\nPid:") != agent_tid ||
        field(status_buf, "\nTgid:") != agent_pid)
        return -2;
    int f = field(status_buf, "\nSeccomp_filters:");
    if (f >= 0)
        return f;
    return field(status_buf, "\nSeccomp:") == 2 ? 1 : (field(status_buf, "\nSeccomp:") == 0 ? 0 : -2);
}

/* Seccomp_filters of thread tid (the text after it in status_buf), -1
 * when it cannot be read (gone). /proc/TID/status, not TID/status below
 * the kept /proc/self/task: an entry looked up below /proc/PID/task/TID
 * makes the process's end cost its reaper milliseconds when that thread
 * ends with it (procmaps.h, pl_proc_own_start); the listing's numbers
 * are the /proc mount's, as /proc/TID's. */
static int thread_filters(const char *tid)
{
    char path[40];
    snprintf(path, sizeof(path), "/proc/%s/status", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, status_buf, sizeof(status_buf) - 1, 0);
    close(fd);
    if (n <= 0)
        return -1;
    status_buf[n] = '\0';
    return field(status_buf, "\nSeccomp_filters:");
}

/* The other threads' filter counts, against the agent's at start: the
 * first thread whose count differs (one that sandboxed itself alone,
 * without TSYNC) into the gate; the hooks go off for good. getdents64 on
 * the kept descriptor of /proc/self/task: no memory of the heap's. */
static void scan_threads(void)
{
    /* Only with no filter at attach: getdents64 and lseek are no calls
     * the attach's plan ran through the filters (the cli's scan before
     * each command covers a process that had one). */
    if (task_fd < 0 && task_open_later && !GATE.odd_tid && GATE.filters_at_start == 0 &&
        read_filters() == GATE.filters_now) {
        /* After a look at our own count, as every openat of the scan. */
        task_fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        task_open_later = false;
    }
    if (task_fd < 0 || GATE.odd_tid || GATE.filters_at_start != 0)
        return;
    char buf[4096];
    if (lseek(task_fd, 0, SEEK_SET) != 0)
        return;
    for (;;) {
        /* Our own count looked at again before each call of the scan: a
         * TSYNC filter that lands during a scan of thousands of threads
         * meets one pread, as at every look, and no openat. */
        if (read_filters() != GATE.filters_now)
            return;
        long n = syscall(SYS_getdents64, task_fd, buf, sizeof(buf));
        if (n <= 0)
            return;
        for (long off = 0; off < n;) {
            const struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *d =
                (const void *)(buf + off);
            off += d->reclen;
            if (d->name[0] < '1' || d->name[0] > '9')
                continue;
            if (read_filters() != GATE.filters_now)
                return;
            int f = thread_filters(d->name);
            if (f < 0 || f == GATE.filters_at_start)
                continue;
            int tid = 0;
            for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            GATE.odd_filters = f;
            __atomic_store_n(&GATE.odd_tid, tid, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* A userfaultfd and pages registered on it for missing pages, made while
 * no filter forbids the calls (at start, with no filter or one the
 * injector found allows them): a read of such a page sleeps in
 * the kernel until a cli fills it, a wait that is no system call (seccomp
 * sees none, and nothing spins). UFFD_USER_MODE_ONLY: the faults are the
 * agent's own reads, and with it an unprivileged process may make one
 * (vm.unprivileged_userfaultfd=0); kernels before 5.11 take it without.
 * No features: no fork event (a fork of the process must not wait for
 * us; the census refuses processes with one), the copy of a fork has the
 * pages unregistered. The system call refused, /dev/userfaultfd makes
 * one too. None (neither here, or a filter at start that was not shown
 * to allow them): a sealed agent spins until a verdict. */
/* A userfaultfd through /dev/userfaultfd (Linux 6.1): for when the
 * system call is refused (a seccomp filter answering EPERM, as container
 * runtimes' default profiles do; vm.unprivileged_userfaultfd=0 on a
 * kernel before 5.11). The device's own permissions decide. */
static long uffd_from_device(void)
{
#ifdef USERFAULTFD_IOC_NEW
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev < 0)
        return -1;
    long fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL)
        fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    close(dev);
    return fd;
#else
    return -1;
#endif
}

static void wait_prepare(void)
{
    if (wait_fd >= 0)
        return;
    long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL)
        fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        fd = uffd_from_device();
    if (fd < 0)
        return;
    struct uffdio_api api = { .api = UFFD_API, .features = 0 };
    size_t len = (size_t)WAIT_PAGES * 4096u;
    void *p = MAP_FAILED;
    if (ioctl((int)fd, UFFDIO_API, &api) == 0)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    struct uffdio_register reg = { .range = { (uintptr_t)p, len }, .mode = UFFDIO_REGISTER_MODE_MISSING };
    if (p == MAP_FAILED || ioctl((int)fd, UFFDIO_REGISTER, &reg) < 0) {
        if (p != MAP_FAILED)
            munmap(p, len);
        close((int)fd);
        return;
    }
    wait_fd = (int)fd;
    wait_pages = p;
    wait_next = 0;
}

/* Once no filter came: the userfaultfd and its pages are given back. */
static void wait_release(void)
{
    if (wait_fd < 0)
        return;
    __atomic_store_n(&GATE.wait_uffd, -1, __ATOMIC_RELEASE);
    munmap(wait_pages, (size_t)WAIT_PAGES * 4096u);
    close(wait_fd);
    wait_fd = -1;
    wait_pages = NULL;
}

/* One wait, no system call: until a cli fills the next page (after it
 * wrote a verdict), or, with no page left or no userfaultfd, a spin of
 * a while. The caller looks at the verdict again. */
static void wait_once(void)
{
    if (wait_fd < 0 || wait_next == WAIT_PAGES) {
        for (int i = 0; i < 1000; i++)
            __builtin_ia32_pause();
        return;
    }
    const volatile uint8_t *page = wait_pages + (size_t)wait_next++ * 4096u;
    __atomic_store_n(&GATE.wait_addr, (uint64_t)(uintptr_t)page, __ATOMIC_SEQ_CST);
    /* A verdict written before the store above is seen here; one written
     * after it is followed by the fill of this page (the cli reads
     * wait_addr after writing the verdict): no wake is lost. */
    if (!verdict_in())
        (void)*page;
    __atomic_store_n(&GATE.wait_addr, 0, __ATOMIC_SEQ_CST);
}

/* The hooks' off switch, given by the agent (the session's key is a layer
 * above this file). */
static void (*watch_hooks_off)(void);

void pl_seccomp_watch_start(void (*describe_slots)(struct hi_seccomp_gate *), void (*hooks_off)(void),
                            bool uffd_allowed, int64_t groups_at_start, bool forked)
{
    watch_hooks_off = hooks_off;
    on_agent = 1;
    agent_tid = (int)syscall(SYS_gettid);
    agent_pid = (int)getpid();
    int fd = pl_proc_own_open("status");
    status_fd = fd >= 0 ? fd : -1;
    GATE.version = HI_GATE_VERSION;
    GATE.agent_tid = agent_tid;
    unsigned holds = __atomic_load_n(&holds_begun, __ATOMIC_SEQ_CST);
    GATE.filters_at_start = read_filters();
    /* The first round's look, unless an install came meanwhile. */
    peek_read_ns = GATE.filters_at_start >= 0 ? pl_now_ns() : 0;
    peek_read_holds = holds;
    GATE.filters_now = GATE.filters_at_start;
    start_groups = GATE.filters_at_start == 0 ? (int64_t)HI_GATE_ALL_GROUPS
                   : GATE.filters_at_start > 0 ? groups_at_start
                                                : -1;
    GATE.odd_tid = 0;
    GATE.odd_filters = 0;
    /* A fork child's threads are its creator, whose filters this thread
     * got with it, and us: nothing to scan before the usual gap, and the
     * listing is opened then, if the child lives that long (most
     * followed backends under pgbench -C end within 20 ms: an openat and
     * a /proc entry less each). */
    task_fd = forked ? -1 : open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    task_open_later = forked;
    next_scan_ns = forked ? pl_now_ns() + SCAN_GAP_NS : 0;
    GATE.verdict_for = 0;
    GATE.allowed = 0;
    GATE.verdict_by = 0;
    GATE.cli_restored = 0;
    GATE.agent_state = HI_GATE_AGENT_RUNNING;
    /* With no filter at all yet, or filters the injector ran over the
     * userfaultfd's calls (they used to be made only without a filter: an
     * agent sealed by a second filter then spun on one CPU, 200 ticks in
     * 2 s in e2e rel_seccomp_prefilter). */
    if (GATE.filters_at_start == 0 || uffd_allowed)
        wait_prepare();
    GATE.wait_uffd = wait_fd;
    GATE.wait_addr = 0;
    describe_slots(&GATE);
    __atomic_store_n(&GATE.sealed, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&GATE.magic, HI_GATE_MAGIC, __ATOMIC_RELEASE);
}

bool pl_seccomp_sealed(void)
{
    return __atomic_load_n(&GATE.sealed, __ATOMIC_ACQUIRE) != 0;
}

bool pl_seccomp_hooks_barred(void)
{
    return pl_seccomp_sealed() || __atomic_load_n(&GATE.odd_tid, __ATOMIC_ACQUIRE) != 0 ||
           __atomic_load_n(&GATE.sandbox_tid, __ATOMIC_SEQ_CST) != 0;
}

/* The hold of a TSYNC install (seccomp_watch.h). */
static int agent_busy, agent_hold;
#define AGENT_HOLD_SPIN_NS (200 * 1000000ull)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause");
#else
    __asm__ volatile("" ::: "memory");
#endif
}

/* Reads closer than this add nothing: a TSYNC filter through a slot of
 * ours waits for the round's end (agent_busy) and makes the next round
 * look again (holds_begun), and one by a raw system call may land after
 * any read anyway. A followed PostgreSQL backend's agent read its status
 * 8 times in its short life, 4 of them within its last snapshot's
 * millisecond (proc_pid_status 1.3% of the server's CPU under pgbench -C
 * -S), then still 6 with a window of 1 ms that each round began anew. */
#define PEEK_FRESH_NS 10000000ull

/* A round after an install through our slots began begins with a look
 * of its own. Called once agent_busy is 1: an installer that found it 0
 * (and went on to install) raised holds_begun before that load, so before
 * our store, and this load sees it (all sequentially consistent). */
static void look_again_after_installs(void)
{
    if (__atomic_load_n(&holds_begun, __ATOMIC_SEQ_CST) != peek_read_holds)
        peek_read_ns = 0;
}

void pl_seccomp_agent_busy(bool busy)
{
    if (!busy) {
        __atomic_store_n(&agent_busy, 0, __ATOMIC_SEQ_CST);
        return;
    }
    __atomic_store_n(&agent_busy, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&agent_hold, __ATOMIC_SEQ_CST)) {
        look_again_after_installs();
        return;
    }
    __atomic_store_n(&agent_busy, 0, __ATOMIC_SEQ_CST);
    uint64_t until = pl_now_ns() + AGENT_HOLD_SPIN_NS; /* vDSO: no system call */
    while (__atomic_load_n(&agent_hold, __ATOMIC_SEQ_CST) && pl_now_ns() < until)
        cpu_relax();
    /* The installer's call has returned (or it was held up past the
     * bound): the look at the status that follows sees its filter. */
    __atomic_store_n(&agent_busy, 1, __ATOMIC_SEQ_CST);
    peek_read_ns = 0;
}

bool pl_seccomp_hold_agent(uint64_t max_ns)
{
    __atomic_fetch_add(&holds_begun, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&agent_hold, 1, __ATOMIC_SEQ_CST);
    uint64_t until = pl_now_ns() + max_ns;
    while (__atomic_load_n(&agent_busy, __ATOMIC_SEQ_CST)) {
        if (pl_now_ns() >= until)
            return false;
        struct timespec ts = { 0, 20000 }; /* before the call: any system call is still allowed */
        nanosleep(&ts, NULL);
    }
    return true;
}

bool pl_seccomp_self_verdict(int filters_before, uint32_t groups_new, const int8_t bad[HI_GATE_NGROUPS],
                             const uint32_t actions[HI_GATE_NGROUPS])
{
    if (__atomic_load_n(&GATE.magic, __ATOMIC_ACQUIRE) != HI_GATE_MAGIC)
        return false;
    int now = __atomic_load_n(&GATE.filters_now, __ATOMIC_ACQUIRE);
    /* The installer's stack is the agent's (same count, and TSYNC makes
     * every other thread's an ancestor of the caller's): the agent's is
     * now that one and the new filter. */
    if (filters_before < 0 || filters_before != now)
        return false;
    uint32_t base;
    if (pl_seccomp_sealed()) {
        if (!verdict_in())
            return false; /* a filter nobody ran is there already */
        base = __atomic_load_n(&GATE.allowed, __ATOMIC_ACQUIRE);
    } else {
        if (start_groups < 0)
            return false;
        base = (uint32_t)start_groups;
    }
    for (int g = 0; g < HI_GATE_NGROUPS; g++) {
        GATE.judged_bad[g] = bad[g];
        GATE.judged_action[g] = actions[g];
    }
    GATE.verdict_by = 1;
    __atomic_store_n(&GATE.allowed, base & groups_new, __ATOMIC_RELEASE);
    __atomic_store_n(&GATE.verdict_for, now + 1, __ATOMIC_RELEASE);
    return true;
}

void pl_seccomp_release_agent(void)
{
    __atomic_store_n(&agent_hold, 0, __ATOMIC_SEQ_CST);
}

/* Not reset by pl_seccomp_watch_start: a thread may call prctl between
 * the patch of the slots and the agent's start (pl_seccomp_watch_stop
 * and a fork child's start forget it). */
void pl_seccomp_note_sandbox(int tid, int pid)
{
    int none = 0;
    GATE.sandbox_pid = pid;
    __atomic_compare_exchange_n(&GATE.sandbox_tid, &none, tid ? tid : -1, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
}

void pl_seccomp_forget_foreign(void)
{
    if (__atomic_load_n(&GATE.sandbox_tid, __ATOMIC_SEQ_CST) && GATE.sandbox_pid != (int)pl_raw_getpid())
        __atomic_store_n(&GATE.sandbox_tid, 0, __ATOMIC_SEQ_CST);
}

void pl_seccomp_note_own_filter(int tid, int filters)
{
    if (__atomic_load_n(&GATE.odd_tid, __ATOMIC_ACQUIRE))
        return;
    GATE.odd_filters = filters;
    __atomic_store_n(&GATE.odd_tid, tid, __ATOMIC_RELEASE);
}

/* The other threads, when due (see pl_seccomp_watch_check); a thread
 * found odd, by us or by a cli: hooks off. */
static void look_at_threads(void)
{
    uint64_t now = pl_now_ns();
    if (!GATE.odd_tid && now >= next_scan_ns) {
        scan_threads();
        last_scan_ns = pl_now_ns();
        /* 500 ms apart, or 50 times the scan's cost (thousands of threads). */
        uint64_t cost = last_scan_ns - now, gap = SCAN_GAP_NS;
        next_scan_ns = last_scan_ns + (cost * 50 > gap ? cost * 50 : gap);
    }
    if (pl_seccomp_hooks_barred())
        watch_hooks_off();
}

static bool verdict_in(void)
{
    return __atomic_load_n(&GATE.verdict_for, __ATOMIC_ACQUIRE) == GATE.filters_now;
}

bool pl_seccomp_may(uint32_t groups)
{
    if (!pl_seccomp_sealed())
        return true;
    if (!verdict_in())
        return false;
    return (__atomic_load_n(&GATE.allowed, __ATOMIC_ACQUIRE) & groups) == groups;
}

/* No system call here: the verdict arrives as a store into our memory,
 * and the wait for it is a page fault (wait_once). */
static void wait_verdict(void)
{
    __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_WAITING, __ATOMIC_RELEASE);
    while (!verdict_in())
        wait_once();
    __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_SERVING, __ATOMIC_RELEASE);
}

/* Reads the status once more and seals on a new filter, without waiting
 * for the verdict. Returns whether sealed. */
static bool peek(void)
{
    if (pl_seccomp_sealed())
        return true;
    if (status_fd < 0 || GATE.filters_at_start == -2)
        return false;
    uint64_t now = pl_now_ns();
    if (peek_read_ns && now - peek_read_ns < PEEK_FRESH_NS)
        return false; /* read unsealed a moment ago in this round */
    unsigned holds = __atomic_load_n(&holds_begun, __ATOMIC_SEQ_CST);
    int f = read_filters();
    peek_read_ns = now;
    peek_read_holds = holds;
    if (f == GATE.filters_now && f != -2)
        return false;
    /* -2 (unreadable) seals too, with a count no verdict can be for
     * except one the cli makes having seen the gate. */
    GATE.filters_now = f == -2 ? (GATE.filters_now > 0 ? GATE.filters_now : 0) + 1000 : f;
    watch_hooks_off();
    __atomic_store_n(&GATE.sealed, 1, __ATOMIC_RELEASE);
    return true;
}

bool pl_seccomp_recheck(uint32_t groups)
{
    if (on_agent)
        peek();
    return pl_seccomp_may(groups);
}

bool pl_seccomp_watch_check(void)
{
    if (pl_seccomp_sealed()) {
        /* A verdict that forbids serving is final for this agent. */
        if (verdict_in() && !pl_seccomp_may(HI_GATE_SERVE))
            return true;
        /* Serving within a verdict: a filter more (the count only grows)
         * needs a verdict of its own. */
        if (verdict_in()) {
            int f = read_filters();
            if (f != GATE.filters_now || f == -2)
                GATE.filters_now = f == -2 ? GATE.filters_now + 1000 : f;
        }
    } else if (!peek()) {
        /* Our own filters as at attach: the others'. */
        look_at_threads();
        return false;
    }
    if (!verdict_in())
        wait_verdict();
    return true;
}

/* Sleeps for good in a call the verdict allows, if any; returns when
 * none is. Each is restarted as itself after a ptrace or job-control stop
 * (no timeout: no restart_syscall, which the filter may kill). */
static void sleep_for_good(void)
{
    static uint32_t never_woken;
    if (!pl_seccomp_may(HI_GATE_PARK) && !pl_seccomp_may(HI_GATE_SLEEP_FUTEX) &&
        !pl_seccomp_may(HI_GATE_SLEEP_PAUSE))
        return;
    __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_PARKED, __ATOMIC_RELEASE);
    for (;;) {
        if (pl_seccomp_may(HI_GATE_PARK))
            poll(NULL, 0, -1);
        else if (pl_seccomp_may(HI_GATE_SLEEP_FUTEX))
            syscall(SYS_futex, &never_woken, FUTEX_WAIT_PRIVATE, 0u, NULL, NULL, 0u);
        else
            syscall(SYS_pause);
    }
}

void pl_seccomp_park(void)
{
    sleep_for_good();
    __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_STUCK, __ATOMIC_RELEASE);
    for (;;) {
        /* A later verdict (a cli that could read the filters this time)
         * may still allow a sleep. */
        sleep_for_good();
        wait_once();
    }
}

void pl_seccomp_watch_stop(void)
{
    if (!pl_seccomp_sealed()) /* sealed: munmap is no call the verdict covers; they stay */
        wait_release();
    if (status_fd >= 0 && pl_seccomp_may(HI_GATE_SERVE))
        close(status_fd);
    if (task_fd >= 0 && pl_seccomp_may(HI_GATE_SERVE))
        close(task_fd);
    status_fd = task_fd = -1;
    __atomic_store_n(&GATE.sandbox_tid, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&GATE.magic, 0, __ATOMIC_RELEASE);
}

/* A fork child that starts a session of its own (payload/serve/
 * fork_follow.h), before its agent starts the watch: the descriptors held
 * are its parent's (the parent agent's status file, a userfaultfd on the
 * parent's pages), and wait_prepare keeps a wait_fd it finds. */
void pl_seccomp_watch_atfork_child(void)
{
    if (status_fd >= 0)
        close(status_fd);
    status_fd = -1;
    /* The parent's listing (its /proc/PID/task: "self" was resolved at
     * the open); each followed child used to keep it open until exec. */
    if (task_fd >= 0)
        close(task_fd);
    task_fd = -1;
    if (wait_fd >= 0) {
        munmap(wait_pages, (size_t)WAIT_PAGES * 4096u);
        close(wait_fd);
    }
    wait_fd = -1;
    wait_pages = NULL;
    GATE.sandbox_tid = 0; /* the parent's thread, not one of ours */
}
