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

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
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
static __thread int on_agent __attribute__((tls_model("initial-exec")));

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

/* A userfaultfd and pages registered on it for missing pages, made while
 * no filter forbids the calls (at start): a read of such a page sleeps in
 * the kernel until a cli fills it, a wait that is no system call (seccomp
 * sees none, and nothing spins). UFFD_USER_MODE_ONLY: the faults are the
 * agent's own reads, and with it an unprivileged process may make one
 * (vm.unprivileged_userfaultfd=0); kernels before 5.11 take it without.
 * No features: no fork event (a fork of the process must not wait for
 * us; the census refuses processes with one), the copy of a fork has the
 * pages unregistered. None (no userfaultfd here, or a filter was there at
 * start): a sealed agent spins as before. */
static void wait_prepare(void)
{
    if (wait_fd >= 0)
        return;
    long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL)
        fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
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

void pl_seccomp_watch_start(void (*describe_slots)(struct hi_seccomp_gate *), void (*hooks_off)(void))
{
    watch_hooks_off = hooks_off;
    on_agent = 1;
    agent_tid = (int)syscall(SYS_gettid);
    agent_pid = (int)getpid();
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", agent_tid);
    status_fd = open(path, O_RDONLY | O_CLOEXEC);
    GATE.version = HI_GATE_VERSION;
    GATE.agent_tid = agent_tid;
    GATE.filters_at_start = read_filters();
    GATE.filters_now = GATE.filters_at_start;
    GATE.verdict_for = 0;
    GATE.allowed = 0;
    GATE.cli_restored = 0;
    GATE.agent_state = HI_GATE_AGENT_RUNNING;
    /* Only with no filter at all yet: the attach checked the filters in
     * place against the calls the agent makes (injector/seccomp_plan.c),
     * and userfaultfd is none of them. */
    if (GATE.filters_at_start == 0)
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
    int f = read_filters();
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
        return false;
    }
    if (!verdict_in())
        wait_verdict();
    return true;
}

void pl_seccomp_park(void)
{
    if (pl_seccomp_may(HI_GATE_PARK)) {
        __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_PARKED, __ATOMIC_RELEASE);
        for (;;)
            poll(NULL, 0, -1);
    }
    __atomic_store_n(&GATE.agent_state, HI_GATE_AGENT_STUCK, __ATOMIC_RELEASE);
    for (;;) {
        /* A later verdict (a cli that could read the filters this time)
         * may still allow the sleep. */
        if (pl_seccomp_may(HI_GATE_PARK))
            pl_seccomp_park();
        wait_once();
    }
}

void pl_seccomp_watch_stop(void)
{
    if (!pl_seccomp_sealed()) /* sealed: munmap is no call the verdict covers; they stay */
        wait_release();
    if (status_fd >= 0 && pl_seccomp_may(HI_GATE_SERVE))
        close(status_fd);
    status_fd = -1;
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
    if (wait_fd >= 0) {
        munmap(wait_pages, (size_t)WAIT_PAGES * 4096u);
        close(wait_fd);
    }
    wait_fd = -1;
    wait_pages = NULL;
}
