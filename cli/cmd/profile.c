/* profile.c - `heapinject -p PID`: the one-shot session.
 *
 *   attach (inject, connect) -> OWN_SESSION -> WATCH -> ticks until the
 *   duration ends or SIGINT/SIGTERM -> SNAPSHOT -> DETACH -> symbolize ->
 *   report.
 *
 * OWN_SESSION first: from then on, if this process dies for any reason the
 * agent sees its connection close and detaches by itself. SIGINT and SIGTERM
 * are blocked outside ppoll(), so the injection is never interrupted half
 * way and a Ctrl-C only ever ends the waiting: the snapshot, detach and
 * report still happen.
 *
 * A report is never lost: -o is opened before attaching, and snapshots are
 * taken in the background every few seconds, so that a target that dies
 * (an OOM kill, a crash) leaves the report of its last snapshot, marked with
 * how old it was when the process went and how it went, and exit status 3.
 * The agent also pushes a snapshot of its own when a thread gets a fatal
 * signal (taken while that thread waits in a handler) or when memory runs
 * short (payload/fatal.h, pressure.h): kept as the newest, so that the
 * last seconds before a crash or an OOM kill are in the report. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/census/census.h"
#include "cli/census/cost.h"
#include "cli/link/census_freeze.h"
#include "cli/link/attach.h"
#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/live.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "cli/cmd/profile_many.h"
#include "cli/cmd/stop_signals.h"
#include "cli/cmd/target_end.h"
#include "cli/link/memory_collect.h"
#include "cli/util/fmt.h"
#include "cli/symbolize/symbolize.h"
#include "cli/process/children.h"
#include "cli/profile/merge.h"
#include "cli/report/processes.h"
#include "cli/process/proc.h"
#include "cli/process/seccomp_gate.h"
#include "cli/link/fill.h"
#include "injector/target.h"

#define DEFAULT_NONINTERACTIVE_S 10.0
#define PEAK_STEP 1.10 /* --dump-on-peak: a new high must beat the last by 10% */
/* Background snapshots: the first soon (a target that dies in its first
 * seconds still leaves stacks), then every 2 s, or less often when one
 * takes long, so that they cost the target's agent thread at most a tenth
 * of its time. */
#define FIRST_SNAPSHOT_S 0.5
#define SNAPSHOT_EVERY_S 2.0
#define SNAPSHOT_COST_SHARE 10.0
/* Pressure snapshots come a second apart at most while memory stays short
 * (payload/agent.c): a gap this long without one ends the episode. */
#define PRESSURE_EPISODE_GAP_S 5.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct session {
    struct cli_options opt;
    struct cli_report_options ro;
    struct cli_output_ctx octx;
    struct cli_output out;     /* -o, opened before attach */
    struct cli_session targets; /* the processes profiled: one, -p PID */
    struct cli_target *target;  /* that one */
    struct cli_live live;
    struct cli_symbolizer *sym;
    int same_ns;

    double start_s;
    struct cli_profile last;   /* newest periodic or pushed snapshot (raw) */
    bool have_last;
    struct hi_snap_push last_why; /* why the agent pushed `last`; reason 0: we asked */
    double pressure_last_s;    /* when the last pressure snapshot came (0: never) */
    double last_at_s;          /* when it was taken (our clock) */
    double snap_cost_s;        /* how long it took */
    double last_tick_at_s;     /* when the newest tick came */
    struct cli_target_end end; /* how the process ended, if it did */
    struct cli_target_exit exit_info;
    struct cli_children children; /* looked up at each report (emit) */
    uint64_t start_ticks;      /* cli_children_now_ticks() before the attach */
    double attach_s;           /* how long the attach took */

    unsigned series_n;         /* files written in the numbered series */
    uint64_t next_dump_alloc;  /* --dump-every threshold */
    double peak_dumped;        /* --dump-on-peak: live bytes of the last dump */
    struct cli_census_cost census_cost; /* --census: the usual fault rate, measured before attach */
};

static void say(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct session *s, const char *fmt, ...)
{
    va_list ap;
    if (s->opt.quiet)
        return;
    cli_live_clear(&s->live);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* Symbolizes p (pid set here) and writes it to out. The caller has put
 * the session's ticks into p (cli_client_copy_ticks) while the client was
 * still open: closing the client frees them. */
static int emit(struct session *s, struct cli_profile *p, struct cli_output *out, const char *note)
{
    char notes[512];
    const char *filled;
    p->pid = s->opt.pid; /* the pid the user knows (not the one in its namespace) */
    filled = cli_fill_from_proc(s->opt.pid, p);
    if (filled[0]) {
        snprintf(notes, sizeof(notes), "%s%s%s", note ? note : "", note ? "; " : "", filled);
        note = notes;
    }
    /* A live thread's /proc entries (root, map_files): a zombie main
     * thread has none. */
    pid_t via = inj_target_live_task(s->opt.pid);
    if (!s->sym && !(s->sym = cli_symbolizer_new(via > 0 ? via : s->opt.pid, s->same_ns)))
        return -ENOMEM;
    int rc = cli_symbolizer_run(s->sym, p);
    if (rc < 0) {
        say(s, "heapinject: symbolization failed: %s\n", strerror(-rc));
        return rc;
    }
    cli_profile_sort(p);
    s->ro.note = note;
    cli_children_find(s->opt.pid, s->start_ticks, &s->children);
    s->ro.children = &s->children;
    /* The process itself, as a report of several lists each (issue 28). */
    char comm[64];
    const char *named = cli_proc_comm_raw(s->opt.pid, comm, sizeof(comm));
    if (cli_profile_set_self(p, strcmp(named, "?") ? named : NULL, NULL, cli_children_parent(s->opt.pid),
                             s->attach_s * 1e3) < 0)
        return -ENOMEM;
    if (s->ro.target_exit) {
        p->processes[0].have_exit = true;
        p->processes[0].exit = *s->ro.target_exit;
    }
    return cli_output_commit_report(out, p, &s->ro);
}

/* One numbered file of a --dump-every/--dump-on-peak series. */
static int dump(struct session *s, const char *why)
{
    struct cli_profile p;
    struct cli_output out;
    char path[4096];
    cli_output_series_path(path, sizeof(path), s->opt.output, ++s->series_n, s->opt.format);
    if (cli_output_open(&out, path, s->opt.mode) < 0)
        return 0; /* said; the session goes on */
    int rc = cli_client_snapshot(&s->target->link, &p);
    if (rc < 0) {
        cli_output_close(&out);
        return rc;
    }
    if (cli_client_copy_ticks(&s->target->link, &p) < 0) {
        cli_profile_free(&p);
        cli_output_close(&out);
        return -ENOMEM;
    }
    p.memory = cli_memory_collect(s->opt.pid, &s->target->link, &p);
    rc = emit(s, &p, &out, NULL);
    cli_output_close(&out);
    if (rc == 0) {
        char a[32];
        say(s, "heapinject: wrote %s (%s; live heap since attach %s)\n", path, why,
            cli_fmt_bytes((double)p.totals.est_live_bytes, a, sizeof(a)));
    }
    cli_profile_free(&p);
    return rc == -ECONNRESET || rc == -EPROTO ? rc : 0; /* a file that failed is not the session's end */
}

static int on_tick(struct session *s)
{
    const struct hi_tick *t = &s->target->link.last_tick;
    double now = now_s(), elapsed = now - s->start_s;
    int rc;

    s->last_tick_at_s = now;
    cli_target_end_check(&s->end);
    cli_live_tick(&s->live, t, elapsed, s->opt.duration_s);
    if (s->opt.dump_every && t->totals.est_alloc_bytes >= s->next_dump_alloc) {
        s->next_dump_alloc = (t->totals.est_alloc_bytes / s->opt.dump_every + 1) * s->opt.dump_every;
        char why[64], a[32];
        snprintf(why, sizeof(why), "%s allocated", cli_fmt_bytes((double)t->totals.est_alloc_bytes, a, sizeof(a)));
        if ((rc = dump(s, why)) < 0)
            return rc;
    }
    double live = (double)t->totals.est_live_bytes;
    if (s->opt.dump_on_peak && live > s->peak_dumped * PEAK_STEP && live >= s->peak_dumped + (double)t->rate) {
        s->peak_dumped = live;
        if ((rc = dump(s, "new peak")) < 0)
            return rc;
    }
    return 0;
}

/* --census: the heap as it is, before detach, from the same agent. A
 * census that cannot be taken is said and the profile still written. */
static void take_census(struct session *s, struct cli_profile *p)
{
    if (strcmp(s->ro.format ? s->ro.format : "text", "text") && strcmp(s->ro.format, "json") &&
        strcmp(s->ro.format, "html")) {
        say(s, "heapinject: --census: a census is written in the text, json and html reports only; not taken\n");
        return;
    }
    struct cli_census *c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->pid = s->opt.pid;
    cli_proc_comm_raw(s->opt.pid, c->comm, sizeof(c->comm)); /* escaped by the census writers */
    say(s, "heapinject: census of pid %d: forking a copy and walking its heap...\n", (int)s->opt.pid);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    c->cost = s->census_cost;
    cli_census_cost_start(s->opt.pid, &c->cost, (double)t0.tv_sec * 1e3 + (double)t0.tv_nsec / 1e6);
    int rc = cli_census_take(&s->target->link, c, 130000);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cli_census_cost_end(s->opt.pid, &c->cost, (double)t1.tv_sec * 1e3 + (double)t1.tv_nsec / 1e6);
    c->wall_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (rc < 0 || c->end.status < 0) {
        say(s, "heapinject: pid %d: no census: %s\n", (int)s->opt.pid, rc < 0 ? s->target->link.error : c->end.why);
        cli_census_free(c);
        free(c);
        return;
    }
    cli_census_cost_keep(s->opt.pid, &c->cost);
    cli_census_name(c);
    p->census = c;
}

/* Where the time after a --duration profile went: seconds each. */
struct late {
    double profile_end;   /* now_s() when the profile ended */
    double snapshot, census, detach, report;
};

/* A --duration session that ends more than a second late says what took
 * the time (a census of a large heap, the symbolizer's first read of big
 * debug files), so that nobody takes the wait for a hang. */
static void late_say(struct session *s, const struct late *l)
{
    double over = now_s() - s->start_s - s->opt.duration_s;
    char what[256];
    int n = 0;

    if (s->opt.duration_s <= 0 || over < 1.0)
        return;
    if (l->census > 0)
        n += snprintf(what + n, sizeof(what) - (size_t)n, "the census %.1f s, ", l->census);
    snprintf(what + n, sizeof(what) - (size_t)n, "the final snapshot %.1f s, detach %.1f s, the report %.1f s",
             l->snapshot, l->detach, l->report);
    say(s, "heapinject: ended %.1f s after the %.1f s profile: %s\n", now_s() - l->profile_end,
        s->opt.duration_s, what);
}

/* p (taken over) becomes the newest snapshot unless the one kept is newer
 * (a push read before the answer to our request is older than it). why:
 * the agent's reason for a pushed one, NULL for ours. */
static void keep_last(struct session *s, struct cli_profile *p, const struct hi_snap_push *why)
{
    if (s->have_last && s->last.snapshot_ns > p->snapshot_ns) {
        cli_profile_free(p);
        return;
    }
    if (s->have_last)
        cli_profile_free(&s->last);
    s->last = *p;
    s->have_last = true;
    s->last_at_s = now_s();
    if (why)
        s->last_why = *why;
    else
        memset(&s->last_why, 0, sizeof(s->last_why));
}

static const char *pressure_measure(uint32_t kind)
{
    switch (kind) {
    case HI_PRESSURE_CGROUP_V1: return "cgroup v1";
    case HI_PRESSURE_CGROUP_V2: return "cgroup v2";
    default: return "system";
    }
}

/* "cgroup usage 190 MiB of 200 MiB" / "system memory in use 23.1 GiB of
 * 24.0 GiB". Returns buf. */
static const char *pressure_words(const struct hi_snap_push *w, char *buf, size_t len)
{
    char u[32], l[32];
    cli_fmt_bytes((double)w->usage_bytes, u, sizeof(u));
    cli_fmt_bytes((double)w->limit_bytes, l, sizeof(l));
    if (w->pressure_kind == HI_PRESSURE_SYSTEM)
        snprintf(buf, len, "system memory in use %s of %s", u, l);
    else
        snprintf(buf, len, "cgroup usage %s of %s", u, l);
    return buf;
}

/* "signal 11 (SIGSEGV)" into buf. */
static const char *signal_words(int sig, char *buf, size_t len)
{
    const char *name = sigabbrev_np(sig);
    snprintf(buf, len, "signal %d%s%s%s", sig, name ? " (SIG" : "", name ? name : "", name ? ")" : "");
    return buf;
}

/* A snapshot the agent pushed by itself (read along with a tick or an
 * answer) becomes the newest, and is said. */
static void take_pushed(struct session *s)
{
    struct cli_profile p;
    struct hi_snap_push why;
    char w[96];
    pid_t other;
    while (cli_client_take_pushed(&s->target->link, &p, &why)) {
        /* A process that stays short of memory gets a snapshot a second:
         * said once per episode (README), each time with -v. It used to
         * be said again every 10 s of one episode (issue 25). */
        bool new_episode = why.reason == HI_PUSH_PRESSURE &&
                           (!s->pressure_last_s || now_s() - s->pressure_last_s >= PRESSURE_EPISODE_GAP_S);
        if (why.reason == HI_PUSH_PRESSURE)
            s->pressure_last_s = now_s();
        if (why.reason == HI_PUSH_PRESSURE && (s->opt.verbose || new_episode)) {
            say(s, "heapinject: pid %d is short of memory (%s): snapshot taken\n", (int)s->opt.pid,
                pressure_words(&why, w, sizeof(w)));
        } else if (why.reason == HI_PUSH_SIGNAL && (other = cli_target_end_other_process(s->opt.pid, why.tid))) {
            /* Not the target's crash: its report must not say it died so. */
            say(s, "heapinject: pid %d: process %d (its child, sharing its memory) got %s\n", (int)s->opt.pid,
                (int)other, signal_words(why.signo, w, sizeof(w)));
            keep_last(s, &p, NULL);
            continue;
        } else if (why.reason == HI_PUSH_SIGNAL) {
            say(s, "heapinject: pid %d got %s: snapshot taken in the signal handler\n", (int)s->opt.pid,
                signal_words(why.signo, w, sizeof(w)));
        }
        keep_last(s, &p, &why);
    }
}

/* A snapshot kept in case the process dies before the end. */
static int periodic_snapshot(struct session *s)
{
    struct cli_profile p;
    double t0 = now_s();
    int rc = cli_client_snapshot(&s->target->link, &p);
    if (rc < 0)
        return rc;
    keep_last(s, &p, NULL);
    s->snap_cost_s = s->last_at_s - t0;
    if (s->opt.verbose)
        say(s, "heapinject: background snapshot: %zu stacks in %.3f s\n", p.nstacks, s->snap_cost_s);
    take_pushed(s); /* one may have come before the answer */
    return 0;
}

static double next_snapshot_in(double cost_s)
{
    return fmax(SNAPSHOT_EVERY_S, cost_s * SNAPSHOT_COST_SHARE);
}

/* Waits for ticks and signals until the session should end. Returns 0 when
 * it ended as planned (duration or signal), or the -errno that lost the
 * agent. */
static int watch_loop(struct session *s, const sigset_t *waitmask)
{
    double deadline = s->opt.duration_s > 0 ? s->start_s + s->opt.duration_s : INFINITY;
    double next_snap = s->start_s + FIRST_SNAPSHOT_S;

    while (!cli_stop_signals_caught()) {
        /* A seccomp filter the process installed meanwhile: the agent
         * waits, making no call, for us to run it over its calls. */
        struct cli_gate_result g;
        if (cli_gate_settle(s->opt.pid, &g) == 0 && !cli_gate_serves(&g))
            return -EPERM;
        double now = now_s();
        if (now >= deadline)
            return 0;
        if (now >= next_snap) {
            int rc = periodic_snapshot(s);
            if (rc < 0)
                return rc;
            next_snap = s->last_at_s + next_snapshot_in(s->snap_cost_s);
            continue;
        }
        double wait = fmin(fmin(deadline, next_snap) - now, 0.25);
        struct timespec ts = { (time_t)wait, (long)((wait - floor(wait)) * 1e9) };
        struct pollfd pfd = { .fd = s->target->link.fd, .events = POLLIN };
        int pr = ppoll(&pfd, 1, &ts, waitmask);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (pr == 0)
            continue;
        int rc;
        while ((rc = cli_client_pump(&s->target->link, 0)) >= 1) { /* ticks read ahead are handled now */
            take_pushed(s);
            if (rc == 1 && (rc = on_tick(s)) < 0)
                return rc;
        }
        take_pushed(s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A profile made of the last tick alone (the target died before any
 * snapshot): totals without stacks. */
static void profile_from_tick(const struct cli_client *c, struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->rate = c->last_tick.rate ? c->last_tick.rate : c->hello.rate;
    p->attach_ns = c->hello.attach_ns;
    p->snapshot_ns = c->last_tick.now_ns;
    p->duration_s = cli_client_since_attach(c, c->last_tick.now_ns);
    p->totals = c->last_tick.totals;
    p->rss_bytes = c->last_tick.rss_bytes;
    p->tick_ms = c->hello.tick_ms;
}

/* Opens -o, and checks where a --dump-every/--dump-on-peak series goes,
 * before anything is attached: a report that cannot be written is said
 * now, not after the session. 0 or -errno (said). */
static int check_outputs(struct session *s)
{
    int rc = cli_output_open(&s->out, s->opt.output, s->opt.mode);
    if (rc < 0 || !(s->opt.dump_every || s->opt.dump_on_peak))
        return rc;
    struct cli_output first;
    char path[4096];
    cli_output_series_path(path, sizeof(path), s->opt.output, 1, s->opt.format);
    if ((rc = cli_output_open(&first, path, s->opt.mode)) < 0) {
        fprintf(stderr, "heapinject: (the numbered files of --dump-every and --dump-on-peak go beside -o %s)\n",
                s->opt.output);
        cli_output_close(&s->out);
        return rc;
    }
    cli_output_close(&first);
    return 0;
}

/* describe_exit's note and JSON fields when the report is a snapshot the
 * agent pushed: in the handler of a fatal signal, or at memory pressure.
 * how: the end as read from the zombie (or unknown). */
static void describe_pushed(struct session *s, const char *how, char *note, size_t len)
{
    struct cli_target_exit *x = &s->exit_info;
    const struct hi_snap_push *w = &s->last_why;
    char what[96];
    x->pushed = (int)w->reason;
    if (w->reason == HI_PUSH_SIGNAL) {
        x->push_signal = w->signo;
        x->push_si_code = w->si_code;
        signal_words(w->signo, what, sizeof(what));
        /* Our handler put SIG_DFL back and let that signal kill the
         * process: unless its zombie says otherwise, that is how it went. */
        if (!s->end.known || s->end.signal == w->signo)
            snprintf(note, len, "as of %.1f s before the process was killed by %s%s; snapshot taken in the "
                     "signal handler, %.1f s after attach", x->as_of_s_before, what,
                     s->end.known && s->end.core_dumped ? ", core dumped" : "", s->last.duration_s);
        else
            snprintf(note, len, "as of %.1f s before the process exited (%s); snapshot taken in the handler of "
                     "%s, %.1f s after attach", x->as_of_s_before, how, what, s->last.duration_s);
        return;
    }
    snprintf(x->pressure_measure, sizeof(x->pressure_measure), "%s", pressure_measure(w->pressure_kind));
    x->pressure_usage = w->usage_bytes;
    x->pressure_limit = w->limit_bytes;
    snprintf(note, len, "as of %.1f s before the process exited (%s); snapshot taken at memory pressure (%s), "
             "%.1f s after attach", x->as_of_s_before, how, pressure_words(w, what, sizeof(what)),
             s->last.duration_s);
}

/* How the session's data is older than the process's end, and how it
 * ended, into s->exit_info and note. */
static void describe_exit(struct session *s, double lost_at, bool stacks, char *note, size_t len)
{
    char how[128];
    struct cli_target_exit *x = &s->exit_info;
    cli_target_end_read(&s->end);
    cli_target_end_describe(&s->end, how, sizeof(how));
    x->as_of_s_before = fmax(0, lost_at - (stacks ? s->last_at_s : s->last_tick_at_s));
    x->stacks = stacks;
    x->status_known = s->end.known;
    x->signal = s->end.signal;
    x->exit_code = s->end.exit_code;
    s->ro.target_exit = x;
    const struct hi_snap_push *w = &s->last_why;
    if (stacks && w->reason) {
        describe_pushed(s, how, note, len);
        return;
    }
    if (stacks)
        snprintf(note, len, "as of %.1f s before the process exited (%s); this report is from the snapshot taken "
                 "%.1f s after attach", x->as_of_s_before, how, s->last.duration_s);
    else if (s->target->link.tick_count)
        snprintf(note, len, "the process exited (%s) %.1f s after attach, before the first snapshot; only the "
                 "totals of its last tick, %.1f s before it exited, are known", how, lost_at - s->start_s,
                 x->as_of_s_before);
    else
        snprintf(note, len, "the process exited (%s) %.1f s after attach, before the profiler's first tick and "
                 "snapshot: nothing it did since attach is known", how, lost_at - s->start_s);
}

int cli_cmd_profile(int argc, char **argv)
{
    struct session s;
    sigset_t oldmask;
    int code = CLI_EXIT_OK, rc;

    memset(&s, 0, sizeof(s));
    cli_session_init(&s.targets);
    if ((rc = cli_options_parse_or_usage(CLI_CMD_PROFILE, argc, argv, &s.opt)) != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;
    if (s.opt.npids > 1 || s.opt.children || s.opt.cgroup)
        return cli_profile_many(&s.opt); /* several processes (issue 28) */
    s.target = cli_session_add(&s.targets, s.opt.pid);
    if (s.opt.duration_s < 0 && !isatty(STDIN_FILENO))
        s.opt.duration_s = DEFAULT_NONINTERACTIVE_S; /* nobody to press Ctrl-C */
    cli_output_options(&s.ro, &s.octx, &s.opt, s.opt.pid);
    if (cli_output_check(&s.ro, s.opt.output) < 0 || check_outputs(&s) < 0)
        return CLI_EXIT_USAGE;
    cli_live_init(&s.live, s.opt.quiet, s.opt.pid);
    s.next_dump_alloc = s.opt.dump_every;

    /* Signals: handlers only set a flag; blocked except inside ppoll(). */
    sigset_t waitmask;
    cli_stop_signals_catch(&oldmask, &waitmask);

    /* The agent's time-to-live only runs while nobody owns the session:
     * here, from heapinject_start until our OWN_SESSION, milliseconds.
     * If we are killed in between (inside the injected heapinject_start,
     * say), the agent sees our pid exit (watch_cli: a pidfd) and leaves at
     * once; the short time-to-live is the fallback where it cannot watch us
     * (another pid namespace, no pidfd_open), still within the 2 s promise.
     * An agent that does watch us through a pidfd stretches it to 10 s
     * (payload/agent.c unowned_ttl_ns): a loaded machine once took more
     * than 2 s to get us to OWN_SESSION. Once owned, the session ends when
     * our connection does. */
    uint64_t ttl = 2;
    struct cli_attach_options ao = {
        .pid = s.opt.pid, .rate = s.opt.rate, .ttl_s = ttl, .watch_cli = true, .via = s.opt.via, .verbose = s.opt.verbose,
        .crash_snapshot = !s.opt.no_crash_snapshot, .pressure_snapshot = !s.opt.no_pressure_snapshot,
        .pymalloc = s.opt.pymalloc,
    };
    /* --census: the copy's worst case against the memory left, before
     * anything is attached, as `heapinject census` does: a census that
     * would be refused refuses the whole session (exit 5), so that the
     * user chooses between --force and a profile without --census. */
    if (s.opt.census && (!s.ro.format || !strcmp(s.ro.format, "text") || !strcmp(s.ro.format, "json")) &&
        (code = cli_census_check_cost(s.opt.pid, s.opt.force, s.opt.quiet, &s.census_cost)) != CLI_EXIT_OK) {
        fprintf(stderr, "heapinject: pid %d: no profile either (--census was asked for; without it the "
                        "profile needs no copy)\n", (int)s.opt.pid);
        goto out;
    }
    s.start_ticks = cli_children_now_ticks();
    double t0 = now_s();
    if ((code = cli_session_attach(s.target, &ao)) != CLI_EXIT_OK)
        goto out;
    s.same_ns = cli_proc_same_mntns(s.opt.pid);
    cli_target_end_watch(&s.end, s.opt.pid);
    if ((rc = cli_client_own_session(&s.target->link)) < 0 || (rc = cli_client_watch(&s.target->link)) < 0) {
        char why[400];
        if (cli_attach_explain_loss(s.opt.pid, why, sizeof(why))) {
            /* exec'd between HELLO and OWN_SESSION: nothing is left */
            fprintf(stderr, "heapinject: %s\n", why);
            code = CLI_EXIT_NOPROC;
            goto out;
        }
        if (cli_attach_target_gone(s.opt.pid)) {
            fprintf(stderr, "heapinject: pid %d exited while being attached\n", (int)s.opt.pid);
            code = CLI_EXIT_NOPROC;
            goto out;
        }
        fprintf(stderr, "heapinject: pid %d: the profiler does not accept the session: %s\n", (int)s.opt.pid,
                s.target->link.error);
        cli_client_detach(&s.target->link);
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    s.start_s = s.last_tick_at_s = now_s();
    s.attach_s = s.start_s - t0;
    {
        char comm[64], rate[32], dur[48];
        cli_proc_comm(s.opt.pid, comm, sizeof(comm));
        if (s.opt.duration_s > 0)
            snprintf(dur, sizeof(dur), "for %.1f s (Ctrl-C stops early)", s.opt.duration_s);
        else
            snprintf(dur, sizeof(dur), "until Ctrl-C");
        say(&s, "heapinject: attached to pid %d (%s) in %.2f s: %u allocator slots hooked, sampling 1 in %s; profiling %s\n",
            (int)s.opt.pid, comm, s.start_s - t0, s.target->link.hello.slots_patched,
            cli_fmt_bytes((double)s.target->link.hello.rate, rate, sizeof(rate)), dur);
    }

    int lost = watch_loop(&s, &waitmask);
    double lost_at = now_s();
    take_pushed(&s); /* read just before the connection went */
    struct cli_profile final;
    bool have_final = false, exited = false;
    const char *note = NULL;
    char notebuf[512];

    /* What the time after the profile went to (late_say). */
    struct late late = { .profile_end = lost_at };
    if (lost == 0) {
        if ((rc = cli_client_snapshot(&s.target->link, &final)) == 0) {
            have_final = true;
            /* The ticks first: the notes compare RSS at the start of the
             * session with now. */
            if (cli_client_copy_ticks(&s.target->link, &final) == 0)
                final.memory = cli_memory_collect(s.opt.pid, &s.target->link, &final);
            late.snapshot = now_s() - lost_at;
            if (s.opt.census) {
                double c0 = now_s();
                take_census(&s, &final);
                late.census = now_s() - c0;
            }
        } else {
            lost = rc;
            lost_at = now_s();
            take_pushed(&s); /* the agent's own, read before the answer broke off */
        }
    }
    double detach_at = now_s();
    if (lost == 0) {
        if ((rc = cli_client_detach(&s.target->link)) < 0 || (rc = cli_client_wait_closed(&s.target->link, 5000)) < 0)
            say(&s, "heapinject: pid %d: detach was not confirmed (%s); the profiler detaches by itself "
                    "now that heapinject disconnects\n", (int)s.opt.pid, s.target->link.error);
    } else {
        /* What the process did: exec'd (alive, but the payload is no
         * longer mapped: a new program image), exited, or neither. */
        char why[400];
        bool execd = cli_attach_explain_loss(s.opt.pid, why, sizeof(why));
        exited = execd || cli_proc_exited_after_hangup(s.opt.pid);
        bool died = exited && !execd;
        const char *what = execd ? "the process exec'd another program" : "the connection to the profiler was lost";
        if (lost == -EPERM && cli_gate_last()->sealed) {
            cli_gate_say(s.opt.pid);
        } else if (died) {
            /* Before anything slow: its parent may reap the zombie. */
            describe_exit(&s, lost_at, s.have_last, notebuf, sizeof(notebuf));
            char how[128];
            say(&s, "heapinject: pid %d exited during the session (%s); the report is as of %.1f s before\n",
                (int)s.opt.pid, cli_target_end_describe(&s.end, how, sizeof(how)), s.exit_info.as_of_s_before);
        } else if (execd) {
            say(&s, "heapinject: %s\n", why);
        } else {
            say(&s, "heapinject: pid %d: lost the profiler: %s%s%s\n", (int)s.opt.pid, s.target->link.error,
                why[0] ? "; " : "", why);
        }
        if (s.have_last) {
            final = s.last;
            s.have_last = false;
            if (!died)
                snprintf(notebuf, sizeof(notebuf), "%s %.1f s after this report's snapshot, taken %.1f s after attach",
                         what, lost_at - s.last_at_s, final.duration_s);
        } else {
            profile_from_tick(&s.target->link, &final);
            if (!died)
                snprintf(notebuf, sizeof(notebuf), "%s before any snapshot; only the totals of the last tick are known",
                         what);
        }
        note = notebuf;
        have_final = true;
        if (!exited && !final.memory && cli_client_copy_ticks(&s.target->link, &final) == 0)
            final.memory = cli_memory_collect(s.opt.pid, NULL, &final);
        code = exited ? CLI_EXIT_NOPROC : CLI_EXIT_FAILURE;
        if (lost == -EPERM && cli_gate_last()->sealed)
            code = CLI_EXIT_UNSUPPORTED;
    }
    double secs = now_s() - s.start_s;
    if (have_final && cli_client_copy_ticks(&s.target->link, &final) < 0)
        code = CLI_EXIT_FAILURE;
    cli_session_close(&s.targets);
    /* A filter that came during the final requests: the agent must not be
     * left waiting for a verdict nobody gives. */
    struct cli_gate_result gate_end;
    cli_gate_settle(s.opt.pid, &gate_end);
    if (lost == 0) {
        /* Said only once every slot is read back from its memory. */
        char d[32], what[600];
        int v = cli_attach_verify_unhooked(s.opt.pid, what, sizeof(what));
        cli_fmt_duration(secs, d, sizeof(d));
        if (v == 0) {
            fprintf(stderr, "heapinject: detached from pid %d after %s%s, but %s\n", (int)s.opt.pid, d,
                    cli_stop_signals_caught() ? " (interrupted)" : "", what);
            code = CLI_EXIT_FAILURE;
        } else {
            say(&s, "heapinject: detached from pid %d after %s%s; %s\n", (int)s.opt.pid, d,
                cli_stop_signals_caught() ? " (interrupted)" : "", what);
        }
    }

    late.detach = now_s() - detach_at;
    if (have_final) {
        /* With --dump-every/--dump-on-peak too: the numbered files are
         * "also", FILE is the report of the whole session. */
        const char *out = s.opt.output;
        double r0 = now_s();
        int emitted = emit(&s, &final, &s.out, note);
        late.report = now_s() - r0;
        if (lost == 0)
            late_say(&s, &late);
        if (emitted < 0) {
            if (code == CLI_EXIT_OK)
                code = CLI_EXIT_FAILURE;
        } else if (out && strcmp(out, "-")) {
            say(&s, "heapinject: wrote %s report to %s\n", s.opt.format, out);
        }
        if (!s.opt.quiet) { /* a master is never silent about its children (issue 28) */
            cli_live_clear(&s.live);
            cli_report_children_notice(s.opt.pid, &s.children, secs, stderr);
        }
        const char *first;
        unsigned nu = s.sym ? cli_symbolizer_unreadable(s.sym, &first) : 0;
        char shown[512];
        if (nu)
            say(&s, "heapinject: %u module%s without symbols (e.g. %s): %s frames show addresses\n", nu,
                nu > 1 ? "s" : "", cli_fmt_printable(first, shown, sizeof(shown)), nu > 1 ? "their" : "its");
        cli_profile_free(&final);
    }
    if (lost == 0)
        code = cli_gate_exit(s.opt.pid, code);
out:
    cli_output_close(&s.out);
    cli_live_clear(&s.live);
    if (s.have_last)
        cli_profile_free(&s.last);
    cli_symbolizer_free(s.sym);
    cli_session_close(&s.targets);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return code;
}
