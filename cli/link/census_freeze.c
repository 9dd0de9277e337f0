/* census_freeze.c - the program's threads held still for the census fork, so
 * that their registers are roots (issue 15, roots of kind "register" and
 * "tls").
 *
 * A pointer that only a register holds (a callee-saved register of a
 * thread blocked in a system call, a loop's cursor) is invisible in the
 * copy: the fork copies memory, not other threads' registers. So between
 * the agent's READY and FORKED the cli seizes every thread but the agent
 * with ptrace, interrupts it, reads its registers (with its thread
 * pointer: where its static TLS is) and sends them; the agent forks while
 * they are still stopped and says FORKED; the threads go on at once. The
 * agent readies everything that could take a lock before READY, so a
 * thread stopped inside malloc or the dynamic linker cannot hold it up.
 *
 * The hold is bounded at 2 s, from the first thread seized to the last let
 * go (issue 25): a thread that does not stop within 200 ms is left running
 * (its stack is still scanned); when what is left of the 2 s would not
 * cover the fork and letting them go again (as long as seizing them took),
 * they are let go before the fork and no registers are sent (the report
 * says why); FORKED is waited for only as long as the bound allows. A cli
 * that dies while holding them lets them go too: the kernel detaches a
 * dead tracer's tracees.
 *
 * A stop, even a ptrace one, ends some waits with a bare EINTR
 * (epoll_wait, sigtimedwait, io_uring_enter, recv or accept on a socket
 * with SO_RCVTIMEO): each stopped thread's call is turned back into one
 * the kernel restarts when the thread goes on, as the injection does
 * (inj_thread_undo_stop_eintr). Issue 25 saw one EINTR per census in each
 * of these before. */
#include "cli/link/census_freeze.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <time.h>

#include "cli/census/census.h"
#include "cli/census/libc_layout.h"
#include "cli/link/client.h"
#include "injector/arch.h"
#include "injector/ptrace_session.h"

#define FREEZE_STOP_MS 200
#define FREEZE_MAX_THREADS CLI_CENSUS_MAX_HELD
#define FREEZE_HOLD_MS 2000     /* the hold at most, first seize to last detach */
#define FREEZE_FORK_MIN_MS 20   /* the fork at least (1 ms for 10 MiB, 35 for 300 MiB) */
#define FREEZE_THAW_MS 500       /* threads not stopped yet, to stop for their detach */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Up to max thread ids but skip's into tids; *all counts every one. */
static int list_tids(pid_t pid, pid_t skip, pid_t *tids, int max, int *all)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int n = 0;
    struct dirent *e;
    *all = 0;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == skip)
            continue;
        ++*all;
        if (n < max)
            tids[n++] = tid;
    }
    closedir(d);
    return n;
}

static void to_census_regs(pid_t tid, const struct user_regs_struct *u, struct hi_census_regs *r)
{
    memset(r, 0, sizeof(*r));
    r->tid = (int32_t)tid;
    r->tp = u->fs_base;
    const unsigned long long g[HI_CENSUS_GPRS] = { u->rax, u->rbx, u->rcx, u->rdx, u->rsi, u->rdi,
                                                   u->rbp, u->rsp, u->r8,  u->r9,  u->r10, u->r11,
                                                   u->r12, u->r13, u->r14, u->r15 };
    for (unsigned i = 0; i < HI_CENSUS_GPRS; i++)
        r->gpr[i] = g[i];
}

int cli_census_freeze(struct cli_census_freeze *fz, pid_t pid, pid_t agent_tid)
{
    memset(fz, 0, sizeof(fz[0]));
    pid_t *tids = calloc(FREEZE_MAX_THREADS, sizeof(pid_t));
    fz->threads = calloc(FREEZE_MAX_THREADS, sizeof(struct inj_thread));
    fz->regs = calloc(FREEZE_MAX_THREADS, sizeof(struct hi_census_regs));
    if (!tids || !fz->threads || !fz->regs) {
        free(tids);
        snprintf(fz->why, sizeof(fz->why), "out of memory");
        return -ENOMEM;
    }
    int all = 0;
    int n = list_tids(pid, agent_tid, tids, FREEZE_MAX_THREADS, &all);
    if (n < 0) {
        free(tids);
        snprintf(fz->why, sizeof(fz->why), "cannot list the threads: %s", strerror(-n));
        return n;
    }
    fz->t0_ms = now_ms();
    double seize_until = fz->t0_ms + FREEZE_HOLD_MS * 2 / 5;
    int first_err = 0;
    /* Every thread is seized and interrupted first, and only then waited
     * for: they stop in parallel, and the hold is about one round trip
     * instead of one per thread (1,000 threads of python3 were held 647 ms
     * one by one, about 0.65 ms a thread on a loaded machine). */
    bool *asked = calloc((size_t)n + 1, sizeof(bool));
    if (!asked) {
        free(tids);
        snprintf(fz->why, sizeof(fz->why), "out of memory");
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        if ((i & 63) == 63 && now_ms() > seize_until) {
            /* Seizing alone took 40% of the bound: letting them go takes
             * longer, and the fork comes on top. */
            fz->over_bound = true;
            break;
        }
        struct inj_thread *t = &fz->threads[fz->nthreads];
        int rc = inj_thread_seize(t, pid, tids[i]);
        if (rc < 0) {
            if (rc != -ESRCH && !first_err)
                first_err = rc; /* ptrace not permitted: no registers, the census goes on */
            continue;
        }
        asked[fz->nthreads++] = ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0;
    }
    fz->seize_ms = now_ms() - fz->t0_ms;
    double deadline = now_ms() + FREEZE_STOP_MS;
    for (size_t i = 0; i < fz->nthreads && !fz->over_bound; i++) {
        struct inj_thread *t = &fz->threads[i];
        double left = deadline - now_ms();
        /* One that has not stopped by the deadline is left running (or is
         * gone): its stack is still scanned. */
        if (!asked[i] || inj_thread_wait(t, left > 0 ? (int)left : 0) < 0 || t->stop == INJ_STOP_EXITED)
            continue;
        struct user_regs_struct u;
        if (ptrace(PTRACE_GETREGS, t->tid, NULL, &u) != 0)
            continue;
        to_census_regs(t->tid, &u, &fz->regs[fz->nregs++]);
        /* The registers just read serve the EINTR check too (one
         * PTRACE_GETREGS a thread, not two as inj_thread_undo_stop_eintr) */
        if (inj_arch_restart_eintr(&u) || inj_arch_restart_eintr_fd(t->tid, &u))
            (void)ptrace(PTRACE_SETREGS, t->tid, NULL, &u);
    }
    free(asked);
    free(tids);
    if (fz->over_bound) {
        fz->nregs = 0;
        snprintf(fz->why, sizeof(fz->why), "holding %d threads would pass the %d ms bound (seizing %zu took %d ms): "
                 "let go before the fork", n, FREEZE_HOLD_MS, fz->nthreads, (int)(now_ms() - fz->t0_ms));
    } else if (!fz->nregs && first_err)
        snprintf(fz->why, sizeof(fz->why), "ptrace: %s", strerror(-first_err));
    else if (all > n) /* the agent's table holds as many (PL_CENSUS_MAX_THREADS) */
        snprintf(fz->why, sizeof(fz->why), "a census holds at most %d threads; %d more ran on, their stacks "
                 "scanned whole", FREEZE_MAX_THREADS, all - n);
    return 0;
}

void cli_census_thaw(struct cli_census_freeze *fz)
{
    if (!fz->threads)
        return;
    /* A detach needs a stopped thread: those that did not stop are
     * interrupted all at once and waited for with one deadline (one at a
     * time, a second each, a process stopped meanwhile held the cli 641 s
     * with 1,000 threads). One still running then is left seized: the
     * kernel lets it go when the cli exits, moments later. */
    for (size_t i = 0; i < fz->nthreads; i++)
        if (fz->threads[i].seized && fz->threads[i].stop == INJ_STOP_NONE)
            ptrace(PTRACE_INTERRUPT, fz->threads[i].tid, NULL, NULL);
    double deadline = now_ms() + FREEZE_THAW_MS;
    for (size_t i = 0; i < fz->nthreads; i++) {
        struct inj_thread *t = &fz->threads[i];
        double left = deadline - now_ms();
        /* One that stopped after the deadline (it was interrupted): its
         * wait is restarted too before it goes. */
        if (t->seized && t->stop == INJ_STOP_NONE && inj_thread_wait(t, left > 0 ? (int)left : 0) == 0 &&
            t->stop == INJ_STOP_EVENT)
            (void)inj_thread_undo_stop_eintr(t->tid);
        if (t->seized && t->stop != INJ_STOP_NONE)
            inj_thread_detach(t);
    }
    if (fz->nthreads)
        fz->held_ms = now_ms() - fz->t0_ms;
    if (fz->nthreads && fz->held_ms > FREEZE_HOLD_MS && !fz->over_bound) {
        /* Letting them go took longer than seizing them did: said, not hidden */
        fz->over_bound = true;
        snprintf(fz->why, sizeof(fz->why), "the hold took %.0f ms, past the %d ms bound (letting %zu threads go "
                 "took longer than seizing them)", fz->held_ms, FREEZE_HOLD_MS, fz->nthreads);
    }
    free(fz->threads);
    fz->threads = NULL;
    fz->nthreads = 0;
}

void cli_census_freeze_free(struct cli_census_freeze *fz)
{
    cli_census_thaw(fz);
    free(fz->regs);
    fz->regs = NULL;
}

struct take_ctx {
    struct cli_census_freeze fz;
    pid_t pid;
};

/* What is left of the bound for the fork: the bound less the time held
 * so far and the time letting them go will take (longer than seizing
 * them did: a thread let go wakes and may take the cli's CPU, 775 ms for
 * 10,002 detaches against about 700 for seizing them at load 24).
 * <= FREEZE_FORK_MIN_MS: no time for the fork, let them go now. */
static double fork_budget_ms(const struct cli_census_freeze *fz)
{
    return FREEZE_HOLD_MS - (now_ms() - fz->t0_ms) - fz->seize_ms * 3 / 2;
}

static int on_ready(void *arg, int32_t agent_tid, const struct hi_census_regs **regs, size_t *n)
{
    struct take_ctx *t = arg;
    int rc = cli_census_freeze(&t->fz, t->pid, (pid_t)agent_tid);
    *regs = t->fz.regs;
    *n = rc == 0 ? t->fz.nregs : 0;
    double left = fork_budget_ms(&t->fz);
    if (*n && left < FREEZE_FORK_MIN_MS) {
        snprintf(t->fz.why, sizeof(t->fz.why), "holding %zu threads to the fork would pass the %d ms bound (%d ms to "
                 "stop them): let go before it", t->fz.nthreads, FREEZE_HOLD_MS, (int)(now_ms() - t->fz.t0_ms));
        *n = 0; /* the cli lets them go at once: no FORKED comes without registers */
        t->fz.over_bound = true;
    }
    return left < 1 ? 1 : (int)left;
}

static void on_forked(void *arg, bool late)
{
    struct cli_census_freeze *fz = &((struct take_ctx *)arg)->fz;
    if (late && fz->threads) {
        fz->over_bound = true;
        snprintf(fz->why, sizeof(fz->why), "no fork within the %d ms bound: the threads were let go before it, "
                 "their registers may be stale", FREEZE_HOLD_MS);
    }
    cli_census_thaw(&((struct take_ctx *)arg)->fz);
}

/* A copy taken while a held thread was inside malloc, halfway through
 * writing a chunk header or moving the top, does not walk (EPROTO: "the
 * chunks of [heap] do not chain", an arena list that does not close). The
 * fork is a moment: another one finds the heap whole. Seen about once in
 * ten censuses of node 20 allocating at full speed with --rate 1. A
 * layout the walker does not know fails the same way every time, three
 * times at most. */
#define CENSUS_TRIES 3

int cli_census_take(struct cli_client *cl, struct cli_census *c, int timeout_ms)
{
    struct hi_census_layout lay;
    char where[sizeof(c->layout_where)];
    int have_layout = cli_census_libc_layout(c->pid, &lay, where, sizeof(where)) == 0;
    int rc = 0;
    for (int try = 1; try <= CENSUS_TRIES; try++) {
        if (try > 1) { /* a fresh result, the process's own figures kept */
            struct cli_census last = *c;
            memset(c, 0, sizeof(*c));
            c->pid = last.pid;
            memcpy(c->comm, last.comm, sizeof(c->comm));
            c->rss_before = last.rss_before;
            cli_census_free(&last);
        }
        snprintf(c->layout_where, sizeof(c->layout_where), "%s", where);
        c->main_arena = have_layout ? lay.main_arena : 0;
        struct take_ctx t;
        memset(&t, 0, sizeof(t));
        t.pid = c->pid;
        struct cli_census_hooks hooks = { on_ready, on_forked, &t, FREEZE_HOLD_MS, have_layout ? &lay : NULL };
        rc = cli_client_census(cl, c, timeout_ms, &hooks);
        cli_census_thaw(&t.fz);
        c->held_ms = t.fz.held_ms;
        c->threads_held = t.fz.nregs;
        snprintf(c->regs_why, sizeof(c->regs_why), "%s", t.fz.why);
        if (t.fz.over_bound)
            fprintf(stderr, "heapinject: pid %d: %s\n", (int)c->pid, t.fz.why);
        cli_census_freeze_free(&t.fz);
        if (rc < 0 || c->end.status != -EPROTO || try == CENSUS_TRIES)
            break;
        fprintf(stderr, "heapinject: pid %d: the copy caught the heap in the middle of a change (%s); "
                        "taking another\n", (int)c->pid, c->end.why);
    }
    return rc;
}
