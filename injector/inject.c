/* inject.c - inj_inject(): preflight, pick and hold a thread at a safe
 * point, dlopen + dlsym + call through remote calls, restore, detach.
 *
 * Order matters for "the target is left as it was": everything that can
 * fail without touching the target (arguments, the library file, /proc
 * checks, the target's libc) runs first; from PTRACE_SEIZE on, every path
 * out restores the registers and detaches. */
#include "injector/inject.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "injector/arch.h"
#include "injector/gdb.h"
#include "injector/libc.h"
#include "injector/libpath.h"
#include "injector/log.h"
#include "injector/maps.h"
#include "injector/mem.h"
#include "injector/ptrace_session.h"
#include "injector/remote_call.h"
#include "injector/safepoint.h"
#include "injector/seccomp_eval.h"
#include "injector/seccomp_plan.h"
#include "injector/target.h"

#define DEFAULT_TIMEOUT_MS 5000
#define MAX_THREADS 4096
/* Attempts on one thread before trying the next (when there is one). */
#define ATTEMPTS_PER_THREAD 20
#define RTLD_NOW_FLAG 2

struct session {
    const struct inj_options *o;
    struct inj_result *res;
    struct inj_maps maps;
    struct inj_libc libc;
    struct inj_safepoint sp;
    struct inj_thread t;
    pid_t rep;                 /* a live thread for /proc lookups (inj_target_live_task) */
    bool uffd_ok;              /* the held thread's filters (if any) allow the agent's userfaultfd */
    bool gate_ok;              /* gate holds what the held thread's filters allow of the agent's calls */
    uint32_t gate;             /* HI_GATE_* groups (common/seccomp_gate_calls.h) */
    char target_path[PATH_MAX];
};

static bool process_gone(pid_t pid)
{
    return inj_target_live_task(pid) < 0;
}

static bool thread_gone(pid_t tid)
{
    struct inj_target_status st;

    return inj_target_status(tid, &st) != 0 || st.state == 'Z' || st.state == 'X';
}

static int exited_err(struct session *s, const char *when)
{
    char how[96] = "exited";

    if (s->t.stop == INJ_STOP_EXITED && s->t.exit_status)
        inj_thread_describe_exit(s->t.exit_status, how, sizeof(how));
    return inj_err(s->res->error, sizeof(s->res->error), INJ_EEXITED,
                   "pid %d %s %s; nothing was loaded", s->o->pid, how, when);
}

static int seize_err(struct session *s, pid_t tid, int e)
{
    char *err = s->res->error;
    size_t el = sizeof(s->res->error);
    struct inj_target_status st, tr;

    /* Another tracer may hold this thread only (the preflight looked at
     * the main thread's TracerPid). */
    if (e == EPERM && inj_target_status(tid, &st) == 0 && st.tracer == getpid())
        /* Ourselves: an earlier attempt seized it and it never stopped
         * (uninterruptible sleep), so it could not be detached yet; the
         * kernel lets go of it when we exit. */
        return inj_err(err, el, INJ_ESTATE,
                       "pid %d: thread %d did not stop within 2 s (state %c: uninterruptible "
                       "sleep); nothing was done. It stays marked as traced by heapinject "
                       "until this command exits, which it does now", s->o->pid, tid,
                       st.state);
    if (e == EPERM && inj_target_status(tid, &st) == 0 && st.tracer) {
        if (inj_target_status(st.tracer, &tr))
            snprintf(tr.comm, sizeof(tr.comm), "?");
        return inj_err(err, el, INJ_ETRACED,
                       "PTRACE_SEIZE pid %d (thread %d): thread already traced by pid %d (%s); "
                       "detach or stop it first", s->o->pid, tid, (int)st.tracer, tr.comm);
    }
    if (e == EPERM || e == EACCES)
        return inj_err(err, el, INJ_EPERM,
                       "PTRACE_SEIZE pid %d (thread %d): %s: run as root or as the target's "
                       "user; see kernel.yama.ptrace_scope / CAP_SYS_PTRACE", s->o->pid, tid,
                       strerror(e));
    return inj_err(err, el, INJ_EINTERNAL, "PTRACE_SEIZE pid %d (thread %d): %s", s->o->pid,
                   tid, strerror(e));
}

/* Our stop made a wait like epoll_wait fail with EINTR: the kernel
 * restarts it instead (inj_thread_undo_stop_eintr). */
static void undo_stop_eintr(struct session *s)
{
    long nr = inj_thread_undo_stop_eintr(s->t.tid);

    if (nr >= 0)
        inj_log(s->o->verbose, "thread %d: syscall %ld failed with EINTR because of our "
                "stop; it will be restarted", s->t.tid, nr);
}

static int hold_safe_thread_in(struct session *s, pid_t *tids);

/* Seizes threads in turn (main thread first) until one is stopped at a
 * safe point; s->t is then held. Unsafe: resume, wait a few ms, retry; after
 * ATTEMPTS_PER_THREAD move to the next thread; give up at the deadline. */
static int hold_safe_thread(struct session *s)
{
    pid_t *tids = malloc(MAX_THREADS * sizeof(*tids));
    int r;

    if (!tids)
        return inj_err(s->res->error, sizeof(s->res->error), INJ_EINTERNAL, "out of memory");
    r = hold_safe_thread_in(s, tids);
    free(tids);
    return r;
}

static int hold_safe_thread_in(struct session *s, pid_t *tids)
{
    const struct inj_options *o = s->o;
    int timeout = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    long long deadline = inj_now_ms() + timeout;
    char why[300] = "no thread could be stopped", prev[300] = "";
    int n = 0, idx = 0, attempts = 0, total = 0, r;

    for (;;) {
        if (idx >= n) {
            /* (Re)read the thread list: threads come and go. */
            n = inj_target_threads(o->pid, tids, MAX_THREADS);
            if (n <= 0)
                return exited_err(s, total ? "while waiting for a safe point"
                                           : "before a thread could be stopped");
            idx = 0;
        }
        if (!s->t.seized && inj_target_in_vfork(o->pid, tids[idx], NULL)) {
            /* Waiting in vfork (state D): no ptrace stop reaches it until
             * its child execs or exits, and a seized thread that never
             * stops cannot be let go (PTRACE_DETACH needs a stop). */
            snprintf(why, sizeof(why), "thread %d waits in vfork() for its child", tids[idx]);
            idx++;
            if (idx >= n) {
                total++;
                if (inj_now_ms() >= deadline)
                    return inj_err(s->res->error, sizeof(s->res->error), INJ_ESTATE,
                                   "pid %d: no thread could be stopped within %d ms (last: %s). "
                                   "The target is unchanged; retry", o->pid, timeout, why);
                inj_sleep_us(5000);
            }
            continue;
        }
        if (!s->t.seized) {
            r = inj_thread_seize(&s->t, o->pid, tids[idx]);
            if (r == -EPERM && thread_gone(tids[idx]) && !process_gone(o->pid)) {
                /* An exited main thread (pthread_exit) stays a zombie
                 * and cannot be traced; the others can. */
                idx++;
                continue;
            }
            if (r == -ESRCH) {
                if (process_gone(o->pid))
                    return exited_err(s, "before a thread could be stopped");
                idx++;
                continue;
            }
            if (r)
                return seize_err(s, tids[idx], -r);
            s->res->seized_ns = inj_now_ns();
            inj_log(o->verbose, "seized thread %d of pid %d", tids[idx], o->pid);
            attempts = 0;
        }
        r = inj_thread_interrupt(&s->t, 2000);
        if (r == -ESRCH) {
            if (process_gone(o->pid))
                return exited_err(s, "while waiting for a safe point");
            s->t.seized = false;
            idx++;
            continue;
        }
        if (r == -ETIMEDOUT) {
            /* Uninterruptible sleep (D state): try another thread. */
            snprintf(why, sizeof(why), "thread %d did not stop (uninterruptible sleep?)",
                     s->t.tid);
            inj_thread_detach(&s->t);
        } else if (r) {
            inj_thread_detach(&s->t);
            return inj_err(s->res->error, sizeof(s->res->error), INJ_EINTERNAL,
                           "PTRACE_INTERRUPT thread %d: %s", s->t.tid, strerror(-r));
        } else {
            undo_stop_eintr(s);
            r = inj_safepoint_check(&s->sp, s->t.tid, why, sizeof(why));
            if (r == 1) {
                s->res->safe_ns = inj_now_ns();
                inj_log(o->verbose, "thread %d is at a safe point (attempt %d): %s", s->t.tid,
                        total + 1, why);
                return INJ_OK;
            }
            if (r < 0)
                snprintf(why, sizeof(why), "unwinding thread %d failed: %s", s->t.tid,
                         strerror(-r));
            if (strcmp(why, prev)) {
                inj_log(o->verbose, "%s; retrying", why);
                snprintf(prev, sizeof(prev), "%s", why);
            }
        }
        total++;
        attempts++;
        if (inj_now_ms() >= deadline) {
            inj_thread_detach(&s->t);
            if (s->t.stop == INJ_STOP_EXITED)
                return exited_err(s, "while waiting for a safe point");
            return inj_err(s->res->error, sizeof(s->res->error), INJ_ETIMEOUT,
                           "pid %d: no thread reached a safe point within %d ms (%d attempts; "
                           "last: %s). The target is unchanged; retry, or raise --timeout",
                           o->pid, timeout, total, why);
        }
        if (s->t.seized && (attempts >= ATTEMPTS_PER_THREAD && n > 1)) {
            inj_thread_detach(&s->t);
            idx++;
            continue;
        }
        if (s->t.seized) {
            r = inj_thread_resume(&s->t);
            if (r == -ESRCH && process_gone(o->pid))
                return exited_err(s, "while waiting for a safe point");
        } else {
            idx++;
        }
        /* A few milliseconds, growing a little: long enough for the thread
         * to leave malloc, short enough to catch a mostly idle one soon. */
        inj_sleep_us(1000 + 500 * (attempts < 8 ? attempts : 8));
    }
}

/* Calls dlerror() in the target and copies its text, or explains why not. */
static void target_dlerror(struct session *s, struct inj_call *c, char *buf, size_t len)
{
    uint64_t p = 0;
    char tmp[512];

    snprintf(buf, len, "(no dlerror text)");
    if (!s->libc.dlerror)
        return;
    if (inj_call_run(c, "dlerror", s->libc.dlerror, NULL, 0, &p, tmp, sizeof(tmp)) != INJ_OK ||
        !p)
        return;
    if (inj_mem_read_string(s->t.tid, p, tmp, sizeof(tmp)) < 0)
        snprintf(buf, len, "(dlerror text unreadable)");
    else
        inj_target_printable(buf, len, tmp); /* the target's memory: never raw in a message */
}

/* The held part: strings, dlopen, dlsym, the call. Registers are restored by
 * the caller. */
/* The start config with what was learnt of the filters in force at
 * attach (common/config.h "uffd", "gate"): only the held thread's filters
 * were run (the state check made sure every thread has the same). */
static const char *with_filter_facts(const struct session *s, const char *arg, char *with, size_t len)
{
    int n = snprintf(with, len, "%s%s", arg, s->uffd_ok ? " uffd=1" : "");
    if (n >= 0 && (size_t)n < len && s->gate_ok)
        n = snprintf(with + n, len - (size_t)n, " gate=%u", (unsigned)s->gate) + n;
    return n >= 0 && (size_t)n < len ? with : arg;
}

/* Runs the held thread tid's filters over the agent's calls (a sealed
 * agent's own verdict starts from them). */
static void learn_gate(struct session *s, pid_t tid)
{
    int bad[HI_GATE_NGROUPS];
    uint32_t actions[HI_GATE_NGROUPS];
    s->gate_ok = inj_seccomp_gate_eval(tid, &s->gate, bad, actions) == 0;
}

static int run_calls(struct session *s, struct inj_call *c)
{
    const struct inj_options *o = s->o;
    struct inj_result *res = s->res;
    char *err = res->error, text[400];
    size_t el = sizeof(res->error);
    uint64_t path_a, sym_a = 0, arg_a = 0, args[2], handle, fn, ret;
    int r;

    r = inj_call_put_string(c, s->target_path, &path_a, err, el);
    if (!r && o->symbol)
        r = inj_call_put_string(c, o->symbol, &sym_a, err, el);
    if (!r && o->symbol && o->argument) {
        char with[1024];
        r = inj_call_put_string(c, with_filter_facts(s, o->argument, with, sizeof(with)), &arg_a, err, el);
    }
    if (r)
        return r;

    args[0] = path_a;
    args[1] = RTLD_NOW_FLAG | s->libc.dlopen_flags;
    inj_log(o->verbose, "calling %s(\"%s\", RTLD_NOW) at 0x%" PRIx64 " in thread %d",
            s->libc.dlopen_name, s->target_path, s->libc.dlopen, s->t.tid);
    r = inj_call_run(c, s->libc.dlopen_name, s->libc.dlopen, args, 2, &handle, err, el);
    res->loaded_ns = inj_now_ns();
    if (r) {
        if (c->crashed) {
            snprintf(text, sizeof(text), "%s", res->error + strlen("inject: "));
            return inj_err(err, el, INJ_ELIB, "loading %s crashed in pid %d (in a library "
                           "constructor?): %s", s->target_path,
                           o->pid, text);
        }
        return r;
    }
    if (c->seccomp_syscall >= 0)
        return inj_err(err, el, INJ_ESECCOMP,
                       "a seccomp filter in pid %d trapped syscall %d (SIGSYS) during %s(); the "
                       "syscall was failed with ENOSYS and the target restored; %s", o->pid,
                       c->seccomp_syscall, s->libc.dlopen_name,
                       handle ? "the library got loaded anyway, but nothing was called"
                              : "nothing was loaded");
    if (!handle) {
        target_dlerror(s, c, text, sizeof(text));
        return inj_err(err, el, INJ_ELIB, "%s(\"%s\") failed in pid %d: %s",
                       s->libc.dlopen_name, s->target_path, o->pid, text);
    }
    res->handle = handle;
    /* dlopen's handle is the library's struct link_map; l_addr comes first. */
    r = inj_mem_read(s->t.tid, handle, &res->load_address, sizeof(res->load_address));
    if (r)
        return inj_err(err, el, INJ_EINTERNAL, "reading link_map at 0x%" PRIx64 ": %s",
                       handle, strerror(-r));
    inj_log(o->verbose, "loaded: handle 0x%" PRIx64 ", load address 0x%" PRIx64, handle,
            res->load_address);
    if (!o->symbol)
        return INJ_OK;

    args[0] = handle;
    args[1] = sym_a;
    r = inj_call_run(c, "dlsym", s->libc.dlsym, args, 2, &fn, err, el);
    if (r)
        return r;
    if (!fn) {
        target_dlerror(s, c, text, sizeof(text));
        return inj_err(err, el, INJ_ESYMBOL, "symbol %s not found in %s: %s", o->symbol,
                       s->target_path, text);
    }
    inj_log(o->verbose, "calling %s at 0x%" PRIx64, o->symbol, fn);
    args[0] = arg_a;
    r = inj_call_run(c, o->symbol, fn, args, 1, &ret, err, el);
    if (r)
        return r;
    if (c->seccomp_syscall >= 0)
        return inj_err(err, el, INJ_ESECCOMP,
                       "a seccomp filter in pid %d trapped syscall %d (SIGSYS) during %s(); the "
                       "syscall was failed with ENOSYS", o->pid, c->seccomp_syscall, o->symbol);
    res->called = true;
    /* The function returns int: sign-extend the low 32 bits of rax. */
    res->return_value = (int64_t)(int32_t)(uint32_t)ret;
    return INJ_OK;
}

/* With a thread held: does libc still sit where we resolved dlopen? A
 * process that exec'd since (a program that execs in a loop) has a new
 * image, and calling the old address would crash it. */
static bool same_image(struct session *s)
{
    struct inj_maps now;
    const struct inj_map *a, *b;
    bool same;

    if (inj_maps_read(s->t.tid, &now))
        return false;
    /* The libc we resolved must still be mapped where it was; which libc
     * comes first may change without an exec (an LD_AUDIT library's own
     * libc, a dlmopen namespace, is mapped beside the program's). */
    a = inj_maps_find_module(&s->maps, inj_maps_is_libc);
    same = false;
    for (size_t i = 0; a && i < now.n && !same; i++) {
        b = &now.v[i];
        same = b->start == a->start && b->inode == a->inode && !strcmp(a->path, b->path);
    }
    inj_maps_free(&now);
    return same;
}

/* Refuses, before the first call, when the held thread's seccomp filters
 * would kill, trap or fail a system call the injection (or the profiler it
 * starts) cannot do without (seccomp_plan.c). */
static int check_seccomp_plan(struct session *s)
{
    struct inj_seccomp_refusal why;
    char act[64];
    int r = inj_seccomp_plan_check(s->t.tid, s->o->profiler_syscalls, &why);

    if (r == 1) {
        inj_log(s->o->verbose, "thread %d: its seccomp filters allow every system call needed", s->t.tid);
        s->uffd_ok = s->o->profiler_syscalls && inj_seccomp_plan_uffd(s->t.tid);
        if (s->o->profiler_syscalls)
            learn_gate(s, s->t.tid);
        return INJ_OK;
    }
    if (r < 0) {
        if (r != -ENOENT)
            inj_log(s->o->verbose, "thread %d: its seccomp filters cannot be read (%s): going on, "
                    "watching for SIGSYS", s->t.tid, strerror(-r));
        return INJ_OK;
    }
    inj_thread_detach(&s->t);
    if (why.strict) {
        char killer[160];

        snprintf(killer, sizeof(killer), "%s(2), which %s needs,", why.syscall, why.purpose);
        return inj_seccomp_strict_refusal(s->res->error, sizeof(s->res->error), s->o->pid,
                                          s->t.tid, killer);
    }
    return inj_err(s->res->error, sizeof(s->res->error), INJ_ESECCOMP,
                   "pid %d runs under a seccomp filter that answers %s to %s(2), which %s needs; "
                   "nothing was done, the process runs on as it was. Profile it without that "
                   "filter (for systemd: SystemCallFilter=)", s->o->pid,
                   inj_seccomp_action_name(why.action, act, sizeof(act)), why.syscall, why.purpose);
}

static int inject_ptrace(struct session *s)
{
    const struct inj_options *o = s->o;
    struct inj_call c;
    sigset_t block, old;
    int r, r2;

    if (inj_safepoint_init(&s->sp, &s->maps, &s->libc))
        return inj_err(s->res->error, sizeof(s->res->error), INJ_EINTERNAL,
                       "libunwind: cannot create an address space");
    s->res->prepared_ns = inj_now_ns();
    r = hold_safe_thread(s);
    if (!r && !same_image(s)) {
        inj_thread_detach(&s->t);
        /* An exec is exit status 3, as one during a session (the program
         * that was asked for is gone); a death is said as such. */
        if (inj_target_exiting(o->pid))
            r = exited_err(s, "while heapinject was getting ready");
        else
            r = inj_err(s->res->error, sizeof(s->res->error), INJ_EEXITED,
                        "pid %d exec'd a new program while heapinject was getting ready (its "
                        "libc moved), so the addresses read before are void; nothing was done: "
                        "retry. A process that execs again and again (a wrapper, a restart loop) "
                        "cannot be profiled: retry once it runs the program it ends in", o->pid);
    }
    if (!r)
        r = check_seccomp_plan(s);
    if (r) {
        inj_safepoint_fini(&s->sp);
        return r;
    }
    /* From here until detach the thread runs our code. In rescue mode
     * (remote_call.c) it restores itself if we die; without it, it would
     * return into address 0 and crash the target. Either way, hold the
     * usual termination signals (Ctrl-C) until it is restored: only
     * SIGKILL can cut us short. */
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);

    r = inj_call_begin(&c, &s->t, o->verbose, s->res->error, sizeof(s->res->error));
    if (r == INJ_OK)
        r = inj_call_enable_rescue(&c, &s->maps, &s->libc, s->res->error,
                                   sizeof(s->res->error));
    if (r == INJ_OK && c.seccomp_syscall >= 0)
        r = inj_err(s->res->error, sizeof(s->res->error), INJ_ESECCOMP,
                    "a seccomp filter in pid %d trapped syscall %d (SIGSYS) in mmap(), which "
                    "loading a library needs; the syscall was failed with ENOSYS and the target "
                    "restored; nothing was loaded", o->pid, c.seccomp_syscall);
    if (c.saved_ok) {
        if (r == INJ_OK)
            r = run_calls(s, &c);
        if (r == INJ_ELIB && c.sigreturn_runs) {
            size_t n = strlen(s->res->error);

            snprintf(s->res->error + n, sizeof(s->res->error) - n,
                     " (pid %d runs under a seccomp filter, which may forbid what loading a "
                     "library needs)", o->pid);
        }
        r2 = inj_call_end(&c, r ? NULL : s->res->error, sizeof(s->res->error));
        if (!r)
            r = r2;
        else if (r2 == INJ_EEXITED && r != INJ_EEXITED)
            r = inj_err(s->res->error, sizeof(s->res->error), INJ_EEXITED,
                        "pid %d exited during injection", o->pid);
    }
    if (s->t.nheld)
        inj_log(o->verbose, "delivering %d signal(s) held during the call", s->t.nheld);
    if (s->t.stop == INJ_STOP_EXITED && r != INJ_EEXITED)
        r = exited_err(s, "during injection");
    inj_thread_detach(&s->t);
    s->res->detached_ns = inj_now_ns();
    inj_log(o->verbose, "registers restored, detached from thread %d", s->t.tid);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    inj_safepoint_fini(&s->sp);
    return r;
}

/* --via gdb: the look at the filters in force that the ptrace path takes
 * before its first call (check_seccomp_plan), with a thread held for that
 * alone before gdb comes (gdb is the tracer from then on; the state check
 * made sure every thread has the same filters). Only the userfaultfd's
 * verdict and the agent's groups are kept (s->gate): a sealed agent then
 * sleeps in a fault instead of spinning on a CPU, and a TSYNC filter
 * through a slot of ours gets its verdict at once (issue 25); whether
 * gdb's calls run is still found out by gdb. */
static bool gdb_uffd_ok(struct session *s)
{
    struct inj_thread t;
    struct inj_seccomp_refusal why;
    bool ok = false;

    if (!s->o->profiler_syscalls || !s->o->symbol || !s->o->argument)
        return false;
    memset(&t, 0, sizeof(t));
    if (inj_thread_seize(&t, s->o->pid, s->rep) == 0 && inj_thread_interrupt(&t, 2000) == 0) {
        if (inj_seccomp_plan_check(s->rep, true, &why) == 1) {
            learn_gate(s, s->rep);
            ok = inj_seccomp_plan_uffd(s->rep);
        }
        inj_thread_undo_stop_eintr(s->rep); /* an epoll_wait we stopped is restarted, no EINTR */
    }
    if (t.seized)
        inj_thread_detach(&t);
    inj_log(s->o->verbose, "thread %d: the filters in force %s the agent's userfaultfd", s->rep,
            ok ? "allow" : "were not shown to allow");
    return ok;
}

static int inject_gdb(struct session *s)
{
    struct inj_options go = *s->o;
    char with[1024];

    s->uffd_ok = gdb_uffd_ok(s);
    go.argument = with_filter_facts(s, go.argument, with, sizeof(with));
    return inj_gdb_inject(&go, s->target_path, &s->maps, &s->libc, s->res);
}

int inj_inject(const struct inj_options *opts, struct inj_result *result)
{
    struct session *s;
    char *err = result->error;
    size_t el = sizeof(result->error);
    int r;

    memset(result, 0, sizeof(*result));
    if (!opts || !opts->library)
        return inj_err(err, el, INJ_EINTERNAL, "no library given");
    r = inj_check_target_state(opts->pid, !opts->program_checked, err, el);
    if (r)
        return r;
    s = calloc(1, sizeof(*s));
    if (!s)
        return inj_err(err, el, INJ_EINTERNAL, "out of memory");
    s->o = opts;
    s->res = result;
    s->rep = inj_target_live_task(opts->pid);
    if (s->rep < 0) {
        r = inj_err(err, el, INJ_ENOPROC, "no such process: pid %d", opts->pid);
        goto out;
    }
    r = inj_libpath_prepare(s->rep, opts->library, s->target_path, sizeof(s->target_path),
                            opts->verbose, err, el);
    if (r)
        goto out;
    r = inj_maps_read(s->rep, &s->maps);
    if (r) {
        r = inj_err(err, el, r == -EACCES ? INJ_EPERM : INJ_ENOPROC,
                    "reading /proc/%d/maps: %s", opts->pid, strerror(-r));
        goto out;
    }
    r = inj_libc_resolve(s->rep, &s->maps, &s->libc, err, el);
    if (r)
        goto out;
    inj_log(opts->verbose, "pid %d: libc %s at bias 0x%" PRIx64 ", %s at 0x%" PRIx64
            ", allocator code 0x%" PRIx64 "-0x%" PRIx64, opts->pid, s->libc.path, s->libc.bias,
            s->libc.dlopen_name, s->libc.dlopen, s->libc.alloc_lo, s->libc.alloc_hi);
    if (opts->method == INJ_VIA_GDB)
        r = inject_gdb(s);
    else
        r = inject_ptrace(s);
    inj_libpath_cleanup(s->rep, opts->library, s->target_path, opts->verbose);
out:
    /* A process that dies while we look at it makes /proc answer oddly
     * (no maps: "statically linked"; no libc; EPERM on a zombie): say
     * what really happened. */
    if (r != INJ_OK && r != INJ_EEXITED && r != INJ_ENOPROC && inj_target_exiting(opts->pid))
        r = inj_err(err, el, INJ_EEXITED, "pid %d exited during the injection; nothing was "
                    "loaded", opts->pid);
    inj_maps_free(&s->maps);
    free(s);
    return r;
}
