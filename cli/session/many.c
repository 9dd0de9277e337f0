/* many.c - a session of several processes: the selection (-p PID,PID,...,
 * --children), and attach, connect and any request run on them all, a few
 * at a time (session.h). */
#include "cli/session/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/process/children.h"
#include "cli/process/proc.h"
#include "cli/util/exitcode.h"
#include "injector/ptrace_session.h"

static bool has_pid(const struct cli_session *s, pid_t pid)
{
    for (size_t i = 0; i < s->ntargets; i++)
        if (s->targets[i].pid == pid)
            return true;
    return false;
}

/* A descendant that has exited and waits to be reaped (a zombie: a
 * worker its master has not waited for yet, a census's copy) is no
 * process to profile: left out of the selection. */
static bool ended(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return true;
    const char *p = strrchr(buf, ')');
    return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

static bool add_one(struct cli_session *s, pid_t pid, size_t *added, bool *full)
{
    if (has_pid(s, pid))
        return true;
    struct cli_target *t = cli_session_add(s, pid);
    if (!t) {
        *full = true;
        return false;
    }
    cli_proc_comm(pid, t->comm, sizeof(t->comm));
    t->ppid = cli_children_parent(pid);
    t->code = CLI_EXIT_OK;
    (*added)++;
    return true;
}

/* The processes of a cgroup v2 directory (its cgroup.procs), at most
 * cap. Said on stderr when it cannot be read. */
static size_t cgroup_procs(const char *cgroup, pid_t *out, size_t cap)
{
    char path[4096];
    FILE *f;
    if (cgroup[0] == '/') {
        snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
        f = fopen(path, "re");
    } else {
        /* v2 alone at /sys/fs/cgroup, or beside v1 at its unified/. */
        snprintf(path, sizeof(path), "/sys/fs/cgroup/unified/%s/cgroup.procs", cgroup);
        if (!(f = fopen(path, "re"))) {
            snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", cgroup);
            f = fopen(path, "re");
        }
    }
    if (!f) {
        fprintf(stderr, "heapinject: --cgroup %s: cannot read %s: %s (a cgroup v2 directory, under "
                        "/sys/fs/cgroup or relative to it, or to /sys/fs/cgroup/unified)\n", cgroup, path,
                strerror(errno));
        return 0;
    }
    size_t n = 0;
    long v;
    while (n < cap && fscanf(f, "%ld", &v) == 1)
        if (v > 0)
            out[n++] = (pid_t)v;
    fclose(f);
    if (!n)
        fprintf(stderr, "heapinject: --cgroup %s: no process in it\n", cgroup);
    return n;
}

size_t cli_session_select(struct cli_session *s, const pid_t *given, size_t ngiven, bool children, const char *cgroup)
{
    size_t added = 0, left = 0, n = ngiven;
    bool full = false;
    pid_t *kids = children ? malloc(CLI_SESSION_MAX_TARGETS * 4 * sizeof(*kids)) : NULL;
    pid_t *pids = malloc((ngiven + CLI_SESSION_MAX_TARGETS) * sizeof(*pids));
    if (!pids) {
        free(kids);
        return 0;
    }
    memcpy(pids, given, ngiven * sizeof(*pids));
    if (cgroup)
        n += cgroup_procs(cgroup, pids + ngiven, CLI_SESSION_MAX_TARGETS);
    for (size_t i = 0; i < n; i++) {
        if (!add_one(s, pids[i], &added, &full))
            left++;
        if (!kids)
            continue;
        size_t nk = cli_children_descendants(pids[i], kids, CLI_SESSION_MAX_TARGETS * 4);
        for (size_t k = 0; k < nk; k++)
            if (!ended(kids[k]) && !add_one(s, kids[k], &added, &full))
                left++;
    }
    free(kids);
    free(pids);
    if (full)
        fprintf(stderr, "heapinject: %zu processes left out: a session holds %d at most\n", left,
                CLI_SESSION_MAX_TARGETS);
    return added;
}

struct each_job {
    struct cli_session *s;
    enum cli_target_state state;
    void (*fn)(struct cli_target *, void *);
    void *arg;
    atomic_size_t next;
};

static void *each_worker(void *p)
{
    struct each_job *j = p;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->s->ntargets)
            return NULL;
        struct cli_target *t = &j->s->targets[i];
        if (t->state == j->state)
            j->fn(t, j->arg);
    }
}

static int each_bounded(struct cli_session *s, enum cli_target_state state, void (*fn)(struct cli_target *, void *),
                        void *arg, size_t bound)
{
    struct each_job j = { .s = s, .state = state, .fn = fn, .arg = arg };
    pthread_t th[CLI_SESSION_ATTACH_PARALLEL > CLI_SESSION_PARALLEL ? CLI_SESSION_ATTACH_PARALLEL
                                                                    : CLI_SESSION_PARALLEL];
    size_t nth = 0, want = 0;
    atomic_init(&j.next, 0);
    for (size_t i = 0; i < s->ntargets; i++)
        want += s->targets[i].state == state;
    if (bound > sizeof(th) / sizeof(th[0]))
        bound = sizeof(th) / sizeof(th[0]);
    if (want > bound)
        want = bound;
    /* Stops of tracees of other threads send this process SIGCHLD too:
     * the injector must not count on its own (injector/ptrace_session.h). */
    if (want > 1)
        inj_ptrace_shared_sigchld(true);
    while (nth < want && pthread_create(&th[nth], NULL, each_worker, &j) == 0)
        nth++;
    int rc = want && !nth ? -EAGAIN : 0;
    if (!nth)
        each_worker(&j); /* here, one after the other */
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    if (want > 1)
        inj_ptrace_shared_sigchld(false);
    return rc;
}

int cli_session_each(struct cli_session *s, enum cli_target_state state, void (*fn)(struct cli_target *, void *),
                     void *arg)
{
    return each_bounded(s, state, fn, arg, CLI_SESSION_PARALLEL);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct attach_job {
    const struct cli_attach_options *o;
    bool own;
};

static void attach_one(struct cli_target *t, void *arg)
{
    const struct attach_job *j = arg;
    struct cli_attach_options o = *j->o;
    o.pid = t->pid;
    double t0 = now_ms();
    t->code = cli_session_attach(t, &o);
    t->attach_ms = now_ms() - t0;
    if (t->code != CLI_EXIT_OK && t->state == CLI_TARGET_NEW)
        /* Said once; not tried again at each look at the tree (a child
         * gone before it could be attached was retried every 0.5 s, its
         * "no such process" printed each time). */
        t->state = CLI_TARGET_CLOSED;
    if (t->code != CLI_EXIT_OK || !j->own)
        return;
    if (cli_client_own_session(&t->link) < 0) {
        /* Not ours: it leaves by its short time-to-live; said, never kept
         * half-owned. */
        fprintf(stderr, "heapinject: pid %d: the profiler does not accept the session: %s\n", (int)t->pid,
                t->link.error);
        cli_client_detach(&t->link);
        cli_session_close_target(t);
        t->code = CLI_EXIT_FAILURE;
    }
}

size_t cli_session_attach_all(struct cli_session *s, const struct cli_attach_options *o, bool own)
{
    struct attach_job j = { o, own };
    each_bounded(s, CLI_TARGET_NEW, attach_one, &j, CLI_SESSION_ATTACH_PARALLEL);
    size_t n = 0;
    for (size_t i = 0; i < s->ntargets; i++)
        n += s->targets[i].state == CLI_TARGET_LINKED;
    return n;
}

static void join_one(struct cli_target *t, void *arg)
{
    const struct cli_attach_options *tmpl = arg;
    if (cli_session_connect(t, true) != CLI_EXIT_OK) {
        /* No agent there: attach one, on a fresh link. */
        cli_client_close(&t->link);
        cli_client_init(&t->link);
        t->state = CLI_TARGET_NEW;
        struct attach_job j = { tmpl, true };
        attach_one(t, &j);
        t->ours = t->state == CLI_TARGET_LINKED;
        return;
    }
    t->code = CLI_EXIT_OK;
    if (cli_client_own_session(&t->link) < 0) {
        fprintf(stderr, "heapinject: pid %d: its profiler does not accept the session: %s\n", (int)t->pid,
                t->link.error);
        cli_session_close_target(t);
        t->code = CLI_EXIT_FAILURE;
        return;
    }
    t->ours = true;
    t->followed = true;
}

size_t cli_session_join_new(struct cli_session *s, const struct cli_attach_options *o)
{
    size_t before = 0, after = 0;
    for (size_t i = 0; i < s->ntargets; i++)
        before += s->targets[i].state == CLI_TARGET_LINKED;
    each_bounded(s, CLI_TARGET_NEW, join_one, (void *)o, CLI_SESSION_ATTACH_PARALLEL);
    for (size_t i = 0; i < s->ntargets; i++)
        after += s->targets[i].state == CLI_TARGET_LINKED;
    return after - before;
}

static void connect_one(struct cli_target *t, void *arg)
{
    t->code = cli_session_connect(t, *(const bool *)arg);
}

size_t cli_session_connect_all(struct cli_session *s, bool quiet)
{
    cli_session_each(s, CLI_TARGET_NEW, connect_one, &quiet);
    size_t n = 0;
    for (size_t i = 0; i < s->ntargets; i++)
        n += s->targets[i].state == CLI_TARGET_LINKED;
    return n;
}

struct cli_target *cli_session_connect_one(struct cli_session *s, pid_t pid, int *code)
{
    cli_session_init(s);
    struct cli_target *t = cli_session_add(s, pid);
    if ((*code = cli_session_connect(t, false)) != CLI_EXIT_OK)
        return NULL;
    return t;
}

const char *cli_session_code_words(int code)
{
    switch (code) {
    case CLI_EXIT_OK: return "ok";
    case CLI_EXIT_NOPROC: return "no such process, or it exited";
    case CLI_EXIT_PERM: return "permission denied";
    case CLI_EXIT_UNSUPPORTED: return "cannot be profiled (static, musl, foreign or exec'd)";
    case CLI_EXIT_BUSY: return "busy: traced, or a profiler is attached already";
    case CLI_EXIT_NOTATTACHED: return "no profiler attached";
    case CLI_EXIT_TIMEOUT: return "no safe point in time";
    case CLI_EXIT_USAGE: return "not a process (a thread id?)";
    default: return "failed";
    }
}
