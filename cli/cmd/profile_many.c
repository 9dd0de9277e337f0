/* profile_many.c - the one-shot session of several processes
 * (profile_many.h).
 *
 *   select (pids, descendants) -> attach all at once, each owned at once
 *   -> wait for the duration or SIGINT/SIGTERM -> one snapshot request to
 *   all -> detach all -> symbolize each code layout once -> merge -> report.
 *
 * Each attach is the one-process attach (cli/link/attach.c) with all its
 * checks; a process that cannot be profiled is listed with its reason and
 * the others go on. As in the one-process session, SIGINT and SIGTERM are
 * blocked outside the wait, so no attach is cut half way, and every agent
 * is owned by this process: should it die, each detaches by itself. */
#include "cli/cmd/profile_many.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/inotify.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd/output.h"
#include "cli/cmd/stop_signals.h"
#include "cli/link/attach.h"
#include "cli/link/last_snapshot.h"
#include "cli/process/children.h"
#include "cli/process/seccomp_gate.h"
#include "cli/session/gather.h"
#include "cli/session/session.h"
#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"

#define DEFAULT_NONINTERACTIVE_S 10.0
/* --children: how often the tree is looked at for processes forked since
 * (a worker recycled, a new connection's backend). */
#define FOLLOW_EVERY_S 0.5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every linked target not yet watched is sent WATCH: its agent sends a
 * TICK (with the top risers) at each tick, read in wait_session, so the
 * report has each process's timeline. One that refuses is profiled
 * without it (said with -v). */
static void watch_new(struct cli_session *s, bool verbose)
{
    for (size_t i = 0; i < s->ntargets; i++) {
        struct cli_target *t = &s->targets[i];
        if (t->state != CLI_TARGET_LINKED || t->watching)
            continue;
        t->watching = true;
        if (cli_client_watch(&t->link) < 0 && verbose)
            fprintf(stderr, "heapinject: pid %d: no ticks: %s\n", (int)t->pid, t->link.error);
    }
}

/* --children: processes of the tree that appeared since the last look
 * join the session (their own profiler if a profiled parent's fork gave
 * them one, from their first allocation; else one attached now: exec'd,
 * vfork, a child whose fork could not be followed), said on stderr. */
static size_t follow_tree(struct cli_session *s, const struct cli_options *o, const struct cli_attach_options *ao)
{
    size_t first = s->ntargets;
    if (!cli_session_select(s, o->pids, o->npids, true, o->cgroup))
        return 0;
    for (size_t i = first; i < s->ntargets; i++)
        s->targets[i].late = true;
    cli_session_join_new(s, ao);
    watch_new(s, o->verbose);
    for (size_t i = first; i < s->ntargets; i++) {
        const struct cli_target *t = &s->targets[i];
        if (t->state == CLI_TARGET_LINKED && !o->quiet)
            fprintf(stderr, "heapinject: pid %d (%s) appeared during the session (parent %d): profiled %s\n",
                    (int)t->pid, t->comm, (int)t->ppid,
                    t->followed ? "from its first allocation (its fork was followed)" : "from now on");
        else if (t->state != CLI_TARGET_LINKED)
            /* Its attach failed (gone already, or its profiler refused
             * the session as it ended), but its profiler may still leave
             * its last snapshot a moment later (cli_session_add_ended):
             * said at the end (say_gone), not taken for lost now. */
            s->targets[i].gone_unsaid = true;
    }
    /* Children forked and ended since the last look (a connection's
     * backend), never joined: the snapshots their followed profilers left
     * as they ended, taken in at each look, before the 16 files a
     * directory keeps are replaced by newer ones. */
    return cli_session_add_ended(s);
}

/* "pid N (comm) exited during the session (exit code 0): ..." */
static void say_exit(const struct cli_target *t)
{
    char how[48];
    if (t->exit.signal)
        snprintf(how, sizeof(how), "killed by signal %d", t->exit.signal);
    else
        snprintf(how, sizeof(how), "exit code %d", t->exit.exit_code);
    fprintf(stderr, "heapinject: pid %d (%s) exited during the session (%s): the snapshot its profiler wrote as it "
                    "ended stays in the report\n", (int)t->pid, t->comm, how);
}

/* Children that appeared and could not be attached, said once their last
 * snapshots had their chance: in the report, or not profiled. */
static void say_gone(struct cli_session *s, bool quiet)
{
    for (size_t i = 0; i < s->ntargets; i++) {
        struct cli_target *t = &s->targets[i];
        if (!t->gone_unsaid)
            continue;
        t->gone_unsaid = false;
        if (t->last && !quiet)
            fprintf(stderr, "heapinject: pid %d (%s) appeared during the session and ended before it could be "
                            "joined (%s): the snapshot its profiler wrote as it ended is in the report\n",
                    (int)t->pid, t->comm, cli_session_code_words(t->code));
        else if (!t->last)
            fprintf(stderr, "heapinject: pid %d (%s) appeared during the session and is not profiled: %s\n",
                    (int)t->pid, t->comm, cli_session_code_words(t->code));
    }
}

/* The TICKs waiting in t's link, read (stored in it). false when the link
 * broke or hung up meanwhile. */
static bool read_ticks(struct cli_target *t)
{
    int rc;
    while ((rc = cli_client_pump(&t->link, 0)) >= 1)
        ;
    return rc == 0;
}

/* t's link hung up: its ticks so far go with the snapshot it left. */
static void keep_ticks(struct cli_target *t, struct cli_profile *ticks)
{
    if (!t->last || !ticks->nticks) {
        free(ticks->ticks);
        return;
    }
    free(t->last->ticks);
    t->last->ticks = ticks->ticks;
    t->last->nticks = ticks->nticks;
}

/* Waits until the deadline or a signal; a target whose agent hangs up
 * meanwhile (the process exited or exec'd) is said and closed. With
 * --children the tree is followed (follow_tree). */
static void wait_session(struct cli_session *s, double deadline, const sigset_t *waitmask, const struct cli_options *o,
                         const struct cli_attach_options *ao, size_t *ended)
{
    bool quiet = o->quiet;
    double next_look = now_s() + FOLLOW_EVERY_S;
    /* one more slot: the watch of the directories where children that
     * end leave their last snapshots */
    struct pollfd *fds = calloc(CLI_SESSION_MAX_TARGETS + 1, sizeof(*fds));
    if (!fds)
        return;
    int ifd = o->children ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
    if (ifd >= 0)
        cli_session_watch_ended(s, ifd);
    while (!cli_stop_signals_caught()) {
        double left = deadline - now_s();
        if (left <= 0)
            break;
        if (o->children && now_s() >= next_look) {
            *ended += follow_tree(s, o, ao);
            if (ifd >= 0)
                cli_session_watch_ended(s, ifd);
            next_look = now_s() + FOLLOW_EVERY_S;
            continue;
        }
        if (o->children && left > next_look - now_s())
            left = fmax(0.001, next_look - now_s());
        size_t n = 0;
        for (size_t i = 0; i < s->ntargets; i++) {
            fds[i].fd = s->targets[i].state == CLI_TARGET_LINKED ? s->targets[i].link.fd : -1;
            /* POLLIN: the TICKs (a pushed snapshot is read whole with them) */
            fds[i].events = POLLRDHUP | POLLIN;
            fds[i].revents = 0;
            n += fds[i].fd >= 0;
        }
        if (!n && !o->children)
            break;
        if (left > 1)
            left = 1;
        struct timespec ts = { (time_t)left, (long)((left - floor(left)) * 1e9) };
        fds[s->ntargets] = (struct pollfd){ ifd, POLLIN, 0 };
        if (ppoll(fds, s->ntargets + 1, &ts, waitmask) <= 0)
            continue;
        if (fds[s->ntargets].revents & POLLIN) {
            /* A child's last snapshot (or any file) written: taken in now,
             * a burst of brief children would outrun the directory's 16. */
            char ev[4096];
            while (read(ifd, ev, sizeof(ev)) > 0)
                ;
            *ended += cli_session_add_ended(s);
        }
        for (size_t i = 0; i < s->ntargets; i++) {
            struct cli_target *t = &s->targets[i];
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            if (read_ticks(t) && !(fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
                continue;
            char why[400];
            struct cli_profile ticks = { 0 };
            if (cli_client_copy_ticks(&t->link, &ticks) < 0)
                ticks.nticks = 0;
            cli_session_close_target(t);
            t->code = CLI_EXIT_NOPROC;
            if (cli_attach_explain_loss(t->pid, why, sizeof(why)))
                fprintf(stderr, "heapinject: %s: it leaves the session\n", why);
            else if (cli_session_take_last(t) > 0 && !quiet)
                say_exit(t);
            else if (!t->last)
                fprintf(stderr, "heapinject: pid %d (%s) exited during the session without a last snapshot "
                                "(_exit, or a signal nothing can catch): its samples are lost\n",
                        (int)t->pid, t->comm);
            keep_ticks(t, &ticks);
        }
    }
    free(fds);
    if (ifd >= 0) {
        *ended += cli_session_add_ended(s); /* the files written since the last event */
        close(ifd);
    }
    say_gone(s, quiet);
}

static void detach_one(struct cli_target *t, void *arg)
{
    (void)arg;
    if (cli_client_detach(&t->link) < 0 || cli_client_wait_closed(&t->link, 5000) < 0) {
        fprintf(stderr, "heapinject: pid %d: detach was not confirmed (%s); the profiler detaches by itself "
                        "now that heapinject disconnects\n", (int)t->pid, t->link.error);
        cli_session_close_target(t);
        /* Most often the process was ending as it was detached (a worker
         * recycled just then): its profiler hung up to write its last
         * snapshot. The report has its snapshot from the gather already;
         * the file is taken and removed, not left for a day in /tmp. */
        cli_session_take_last(t);
        return;
    }
    cli_socket_wait_gone(t->sock.local);
    cli_session_close_target(t);
}

/* Every detached target's slots read back; the ones still hooked said.
 * Returns how many are verified unhooked, *bad how many are not. */
static size_t verify_all(struct cli_session *s, size_t *bad)
{
    size_t good = 0;
    *bad = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        struct cli_target *t = &s->targets[i];
        if (!t->ours || t->code != CLI_EXIT_OK)
            continue;
        char what[600];
        int v = cli_attach_verify_unhooked(t->pid, what, sizeof(what));
        if (v == 0) {
            fprintf(stderr, "heapinject: detached from pid %d, but %s\n", (int)t->pid, what);
            (*bad)++;
        } else if (v > 0) {
            good++;
        }
    }
    return good;
}

static bool given(const struct cli_options *o, pid_t pid)
{
    for (size_t i = 0; i < o->npids; i++)
        if (o->pids[i] == pid)
            return true;
    return false;
}

int cli_profile_many(const struct cli_options *opt)
{
    struct cli_options o = *opt;
    struct cli_report_options ro;
    struct cli_output_ctx octx;
    struct cli_output out;
    struct cli_session *ss = calloc(1, sizeof(*ss));
    int code = CLI_EXIT_OK;
    char a[32], b[32];

    if (!ss)
        return CLI_EXIT_FAILURE;
    if (o.census || o.dump_every || o.dump_on_peak) {
        fprintf(stderr, "heapinject: --census, --dump-every and --dump-on-peak take one process (-p PID without "
                        "--children)\n");
        free(ss);
        return CLI_EXIT_USAGE;
    }
    if (o.duration_s < 0 && !isatty(STDIN_FILENO))
        o.duration_s = DEFAULT_NONINTERACTIVE_S; /* nobody to press Ctrl-C */
    cli_output_options(&ro, &octx, &o, o.pid);
    if (cli_output_check(&ro, o.output) < 0 || cli_output_open(&out, o.output, o.mode) < 0) {
        free(ss);
        return CLI_EXIT_USAGE;
    }

    sigset_t oldmask, waitmask;
    cli_stop_signals_catch(&oldmask, &waitmask);

    cli_session_init(ss);
    size_t n = cli_session_select(ss, o.pids, o.npids, o.children, o.cgroup);
    if (!n) {
        fprintf(stderr, "heapinject: no process selected\n");
        code = CLI_EXIT_NOPROC;
        goto out;
    }
    if (!o.quiet) {
        fprintf(stderr, "heapinject: attaching to %zu process%s:", n, n == 1 ? "" : "es");
        for (size_t i = 0; i < ss->ntargets; i++)
            fprintf(stderr, "%s %d (%s)", i ? "," : "", (int)ss->targets[i].pid, ss->targets[i].comm);
        fputc('\n', stderr);
    }
    /* As the one-process session: a short time-to-live until OWN_SESSION,
     * which each attach thread sends at once. */
    struct cli_attach_options ao = {
        .rate = o.rate, .ttl_s = 2, .watch_cli = true, .via = o.via, .verbose = o.verbose,
        .crash_snapshot = !o.no_crash_snapshot, .pressure_snapshot = !o.no_pressure_snapshot,
        .pymalloc = o.pymalloc,
        /* --children: a child forked from now on gets a profiler of its
         * own in its fork handler, before its first allocation; the look
         * at the tree every FOLLOW_EVERY_S then finds it by its socket
         * and owns it. The look still attaches what following cannot
         * give a profiler (vfork, posix_spawn, a refused child). */
        .follow_forks = o.children,
        /* A process that exits during the session leaves its last
         * snapshot (PID.last), taken into the report when it hangs up. */
        .last_snapshot = true,
    };
    double t0 = now_s();
    size_t linked = cli_session_attach_all(ss, &ao, true);
    watch_new(ss, o.verbose);
    double attach_s = now_s() - t0;
    int first_bad = CLI_EXIT_OK;
    char left_out[1024] = "";
    size_t nleft = 0, lo = 0;
    for (size_t i = 0; i < ss->ntargets; i++) {
        struct cli_target *t = &ss->targets[i];
        if (t->state == CLI_TARGET_LINKED) {
            t->ours = true;
            if (!o.quiet)
                fprintf(stderr, "heapinject: attached to pid %d (%s) in %.0f ms: %u allocator slots hooked\n",
                        (int)t->pid, t->comm, t->attach_ms, t->link.hello.slots_patched);
            continue;
        }
        fprintf(stderr, "heapinject: pid %d (%s) is not profiled: %s\n", (int)t->pid, t->comm,
                cli_session_code_words(t->code));
        if (given(&o, t->pid) && first_bad == CLI_EXIT_OK)
            first_bad = t->code ? t->code : CLI_EXIT_FAILURE;
        nleft++;
        if (lo < sizeof(left_out))
            lo += (size_t)snprintf(left_out + lo, sizeof(left_out) - lo, "%spid %d (%s): %s", lo ? "; " : "",
                                   (int)t->pid, t->comm, cli_session_code_words(t->code));
    }
    if (!linked) {
        code = first_bad != CLI_EXIT_OK ? first_bad : CLI_EXIT_FAILURE;
        goto out;
    }
    double start = now_s();
    if (!o.quiet) {
        char dur[48];
        if (o.duration_s > 0)
            snprintf(dur, sizeof(dur), "for %.1f s (Ctrl-C stops early)", o.duration_s);
        else
            snprintf(dur, sizeof(dur), "until Ctrl-C");
        fprintf(stderr, "heapinject: %zu of %zu processes attached in %.0f ms (%d at a time), sampling 1 in %s; "
                        "profiling %s\n", linked, ss->ntargets, attach_s * 1e3, CLI_SESSION_ATTACH_PARALLEL,
                cli_fmt_bytes((double)o.rate, a, sizeof(a)), dur);
    }
    size_t brief = 0;
    wait_session(ss, o.duration_s > 0 ? start + o.duration_s : INFINITY, &waitmask, &o, &ao, &brief);

    /* --children: a child forked and ended after the last look at the
     * tree (as follow_tree takes in those of every look before): the
     * snapshot its followed profiler left as it ended, its file removed
     * (nothing is left behind). */
    if (o.children)
        brief += cli_session_add_ended(ss);
    if (brief && !o.quiet)
        fprintf(stderr, "heapinject: %zu process%s forked and ended between two looks at the tree: in the report by "
                        "the snapshot each left as it ended\n", brief, brief == 1 ? "" : "es");
    struct cli_profile merged;
    struct cli_gather_stats st;
    int rc = cli_session_gather(ss, &merged, &st);
    double secs = now_s() - start;
    cli_session_each(ss, CLI_TARGET_LINKED, detach_one, NULL);
    size_t bad, good = verify_all(ss, &bad);
    for (size_t i = 0; i < ss->ntargets; i++) {
        struct cli_gate_result g;
        if (ss->targets[i].ours)
            cli_gate_settle(ss->targets[i].pid, &g);
    }
    if (bad)
        code = CLI_EXIT_FAILURE;
    else if (!o.quiet)
        fprintf(stderr, "heapinject: detached from %zu process%s after %s%s; every allocator slot of each read "
                        "back: none points into the profiler\n", good, good == 1 ? "" : "es",
                cli_fmt_duration(secs, b, sizeof(b)), cli_stop_signals_caught() ? " (interrupted)" : "");
    if (rc < 0) {
        fprintf(stderr, "heapinject: no report: %s\n", rc == -ENOENT ? "no process answered the snapshot" : strerror(-rc));
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    char note[1400];
    int nn = snprintf(note, sizeof(note), "%zu processes, snapshots taken within %.1f ms of each other; %zu code "
                      "layout%s symbolized for them", st.taken, st.spread_ms, st.layouts, st.layouts == 1 ? "" : "s");
    if (st.ended && nn > 0 && (size_t)nn < sizeof(note))
        nn += snprintf(note + nn, sizeof(note) - (size_t)nn, "; %zu exited during the session, in the report by the "
                       "snapshot each left as it ended", st.ended);
    if (nleft && nn > 0 && (size_t)nn < sizeof(note))
        snprintf(note + nn, sizeof(note) - (size_t)nn, "; not profiled: %s", left_out);
    ro.note = note;
    if (!o.quiet)
        fprintf(stderr, "heapinject: %zu snapshots in %.0f ms, within %.1f ms of each other; %zu code layout%s "
                        "symbolized in %.0f ms\n", st.taken, st.snapshot_ms, st.spread_ms, st.layouts,
                st.layouts == 1 ? "" : "s", st.symbolize_ms);
    if (cli_output_commit_report(&out, &merged, &ro) < 0) {
        code = CLI_EXIT_FAILURE;
    } else if (o.output && strcmp(o.output, "-") && !o.quiet) {
        fprintf(stderr, "heapinject: wrote %s report to %s\n", o.format, o.output);
    }
    if (st.nunreadable && !o.quiet)
        fprintf(stderr, "heapinject: %u module%s without symbols (e.g. %s): %s frames show addresses\n",
                st.nunreadable, st.nunreadable > 1 ? "s" : "", st.unreadable, st.nunreadable > 1 ? "their" : "its");
    cli_profile_free(&merged);
    if (code == CLI_EXIT_OK)
        code = first_bad;
out:
    cli_session_close(ss);
    cli_output_close(&out);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    free(ss);
    return code;
}
