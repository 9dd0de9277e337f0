/* injector_remote_call.c - a real remote call on a forked child: seize,
 * interrupt inside nanosleep, call functions in it, restore, detach; the
 * child's sleep is not cut short and it sees no EINTR. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "injector/inject.h"
#include "injector/libc.h"
#include "injector/maps.h"
#include "injector/ptrace_session.h"
#include "injector/remote_call.h"

static int pipefd[2];

static pid_t spawn_sleeper_for(long secs)
{
    pid_t p;

    cr_assert_eq(pipe(pipefd), 0);
    p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        struct timespec ts = { secs, 0 }, a, b;
        int rc;

        clock_gettime(CLOCK_MONOTONIC, &a);
        rc = nanosleep(&ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        /* Exit status: 0 = full sleep and no error. */
        _exit(rc != 0 ? 1 : (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < secs * 1000000000L ? 2 : 0);
    }
    usleep(100 * 1000);
    return p;
}

static pid_t spawn_sleeper(void)
{
    return spawn_sleeper_for(1);
}

static uint64_t libc_fn(const char *name)
{
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

    cr_assert_not_null(h);
    return (uint64_t)(uintptr_t)dlsym(h, name);
}

Test(injector_remote_call, calls_functions_and_restores_the_thread, .timeout = 20)
{
    pid_t child = spawn_sleeper();
    struct inj_thread t;
    struct inj_call c;
    char err[512] = "";
    uint64_t ret = 0, addr, args[1];
    int st;

    cr_assert_eq(inj_thread_seize(&t, child, child), 0);
    cr_assert_eq(inj_thread_interrupt(&t, 2000), 0);
    cr_assert_eq(t.stop, INJ_STOP_EVENT);
    cr_assert_eq(inj_call_begin(&c, &t, false, err, sizeof(err)), INJ_OK, "%s", err);

    /* The child is a fork of us: same libc addresses. */
    cr_assert_eq(inj_call_run(&c, "getpid", libc_fn("getpid"), NULL, 0, &ret, err, sizeof(err)),
                 INJ_OK, "%s", err);
    cr_expect_eq((pid_t)ret, child);
    cr_assert_eq(inj_call_put_string(&c, "seventeen chars!!", &addr, err, sizeof(err)), INJ_OK);
    args[0] = addr;
    cr_assert_eq(inj_call_run(&c, "strlen", libc_fn("strlen"), args, 1, &ret, err, sizeof(err)),
                 INJ_OK, "%s", err);
    cr_expect_eq(ret, 17);
    cr_expect_eq(c.seccomp_syscall, -1);

    cr_assert_eq(inj_call_end(&c, err, sizeof(err)), INJ_OK, "%s", err);
    cr_assert_eq(inj_thread_detach(&t), 0);
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st), "child died: status %d", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "nanosleep in the child was disturbed (%d)", WEXITSTATUS(st));
}

Test(injector_remote_call, a_faulting_call_is_undone, .timeout = 20)
{
    pid_t child = spawn_sleeper();
    struct inj_thread t;
    struct inj_call c;
    char err[512] = "";
    uint64_t ret = 0, args[1] = { 8 };   /* strlen((char *)8): SIGSEGV */
    int st;

    cr_assert_eq(inj_thread_seize(&t, child, child), 0);
    cr_assert_eq(inj_thread_interrupt(&t, 2000), 0);
    cr_assert_eq(inj_call_begin(&c, &t, false, err, sizeof(err)), INJ_OK, "%s", err);
    cr_expect_eq(inj_call_run(&c, "strlen", libc_fn("strlen"), args, 1, &ret, err, sizeof(err)),
                 INJ_EINTERNAL);
    cr_expect(c.crashed);
    cr_expect(strstr(err, "SEGV") != NULL, "%s", err);
    cr_assert_eq(inj_call_end(&c, err, sizeof(err)), INJ_OK, "%s", err);
    cr_assert_eq(inj_thread_detach(&t), 0);
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child did not survive: status %d", st);
}

/* What the injector process below reports before it dies. */
struct dead_report {
    uint64_t page;      /* its rescue page in the target, or 0 */
    int self_unmap;     /* the page was to unmap itself */
    int at;             /* enum inj_call_at when it died */
    uint64_t ret;       /* getpid() through the stub, when called */
};

/* Whether [page, page + 1) is mapped in pid; -1 when pid is gone. */
static int page_mapped(pid_t pid, uint64_t page)
{
    char path[64], line[512];
    unsigned long lo, hi;
    int found = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && page >= lo && page < hi)
            found = 1;
    fclose(f);
    return found;
}

/* An injector process sets up rescue mode in a sleeping child, optionally
 * calls getpid() through the return stub, and exits without detaching,
 * as if SIGKILLed: the kernel lets the child go on from where it was held.
 * It must come back to its sleep by itself (which then starts over, as
 * after any rescue), with our page gone, and sleep the whole time. */
static void injector_dies_holding_the_page(bool after_call)
{
    pid_t child = spawn_sleeper_for(1), inj;
    int rp[2], st, mapped = 1;
    struct dead_report rep;

    cr_assert_eq(pipe(rp), 0);
    inj = fork();
    cr_assert_geq(inj, 0);
    if (inj == 0) {
        struct inj_thread t;
        struct inj_call c;
        struct inj_maps maps;
        struct inj_libc libc;
        char err[512];

        memset(&rep, 0, sizeof(rep));
        if (inj_thread_seize(&t, child, child) || inj_thread_interrupt(&t, 2000) ||
            inj_call_begin(&c, &t, false, err, sizeof(err)) != INJ_OK ||
            inj_maps_read(child, &maps) ||
            inj_libc_resolve(child, &maps, &libc, err, sizeof(err)) != INJ_OK ||
            inj_call_enable_rescue(&c, &maps, &libc, err, sizeof(err)) != INJ_OK)
            _exit(3);
        rep.page = c.rescue ? c.page : 0;
        rep.self_unmap = c.self_unmap;
        if (after_call && rep.page &&
            inj_call_run(&c, "getpid", libc_fn("getpid"), NULL, 0, &rep.ret, err,
                         sizeof(err)) != INJ_OK)
            _exit(4);
        rep.at = (int)c.at;
        if (write(rp[1], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
            _exit(5);
        _exit(0); /* no detach, no inj_call_end: the tracer just goes */
    }
    close(rp[1]);
    cr_assert_eq(waitpid(inj, &st, 0), inj);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "injector process failed: status %d", st);
    cr_assert_eq(read(rp[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
    close(rp[0]);
    cr_assert_neq(rep.page, 0, "no rescue page was mapped");
    cr_assert(rep.self_unmap, "no seccomp filter here: the page should unmap itself");
    cr_expect_eq(rep.at, INJ_AT_UNMAP);
    if (after_call)
        cr_expect_eq((pid_t)rep.ret, child, "getpid() through the stub returned %llu",
                     (unsigned long long)rep.ret);
    /* The child sleeps ~1 s more; the page goes within microseconds. */
    for (int i = 0; i < 50 && (mapped = page_mapped(child, rep.page)) == 1; i++)
        usleep(10 * 1000);
    cr_expect_eq(mapped, 0, "rescue page 0x%llx %s", (unsigned long long)rep.page,
                 mapped == 1 ? "still mapped after the injector died" : "unreadable: child gone");
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st), "child died: status %d", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "nanosleep in the child was disturbed (%d)", WEXITSTATUS(st));
}

/* No .timeout here: with two timed tests at once, criterion 2.4's runner
 * leaks 48 bytes that LeakSanitizer reports (make unit runs --jobs 2).
 * Every wait above is bounded (interrupt 2 s, a 1 s sleeper, 0.5 s poll). */
Test(injector_remote_call, a_dead_injector_leaves_no_page_after_mmap)
{
    injector_dies_holding_the_page(false);
}

Test(injector_remote_call, a_dead_injector_leaves_no_page_after_a_call)
{
    injector_dies_holding_the_page(true);
}
