/* many.c - attach, snapshot and detach of several processes (many.h). */
#include "cli/cmd/many.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd/output.h"
#include "cli/link/attach.h"
#include "cli/link/last_snapshot.h"
#include "cli/process/children.h"
#include "cli/process/paths.h"
#include "cli/session/gather.h"
#include "cli/session/session.h"
#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool given(const struct cli_options *o, pid_t pid)
{
    for (size_t i = 0; i < o->npids; i++)
        if (o->pids[i] == pid)
            return true;
    return false;
}

void cli_many_note_failure(struct cli_many_failures *f, const struct cli_options *o, pid_t pid, int code)
{
    if (given(o, pid) && f->first_given == CLI_EXIT_OK)
        f->first_given = code;
    if (f->first == CLI_EXIT_OK)
        f->first = code;
}

/* A session of o's selection; NULL when out of memory (said). */
static struct cli_session *selection(const struct cli_options *o)
{
    struct cli_session *s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "heapinject: out of memory\n");
        return NULL;
    }
    cli_session_init(s);
    if (cli_session_select(s, o->pids, o->npids, o->children, o->cgroup) == 0) {
        fprintf(stderr, "heapinject: no process selected\n");
        free(s);
        return NULL;
    }
    return s;
}

/* Says every target that has no link and why; returns the exit code of
 * the first pid given with -p among them (CLI_EXIT_OK when none). With
 * some_linked, a process without a profiler is no failure (the master of
 * workers attached one by one, asked for with --children). */
static int say_left_out(const struct cli_session *s, const struct cli_options *o, const char *what, bool some_linked)
{
    int first = CLI_EXIT_OK;
    for (size_t i = 0; i < s->ntargets; i++) {
        const struct cli_target *t = &s->targets[i];
        if (t->code == CLI_EXIT_OK)
            continue;
        fprintf(stderr, "heapinject: pid %d (%s): not %s: %s\n", (int)t->pid, t->comm, what,
                cli_session_code_words(t->code));
        if (some_linked && t->code == CLI_EXIT_NOTATTACHED)
            continue;
        if (given(o, t->pid) && first == CLI_EXIT_OK)
            first = t->code;
    }
    return first;
}

/* "-p A,B,C" or "-p A --children": o's selection as typed, into buf. */
static const char *selection_words(const struct cli_options *o, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s", o->npids ? "-p " : "");
    for (size_t i = 0; i < o->npids && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "," : "", (int)o->pids[i]);
    if (o->unit && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s--unit %s", n ? " " : "", o->unit);
    else if (o->cgroup && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s--cgroup %s", n ? " " : "", o->cgroup);
    if (o->children && n < len)
        snprintf(buf + n, len - n, " --children");
    return buf;
}

int cli_many_attach(const struct cli_options *o)
{
    struct cli_session *s = selection(o);
    if (!s)
        return CLI_EXIT_FAILURE;
    /* --children: the tree as it grows too. A child forked from now on
     * gets a profiler of its own before its first allocation (its socket
     * named by its pid), which `snapshot`, `status` and `detach` of the
     * tree find; one that exits leaves its last snapshot. */
    struct cli_attach_options ao = { .rate = o->rate, .ttl_s = o->ttl_s, .via = o->via, .verbose = o->verbose,
                                     .follow_forks = o->follow_forks || o->children, .pymalloc = o->pymalloc,
                                     .lazy_children = o->lazy_children,
                                     .last_snapshot = true };
    double t0 = now_ms();
    size_t n = cli_session_attach_all(s, &ao, false);
    double ms = now_ms() - t0;
    char rate[32], ttl[32];
    for (size_t i = 0; i < s->ntargets && !o->quiet; i++) {
        const struct cli_target *t = &s->targets[i];
        if (t->state == CLI_TARGET_LINKED)
            fprintf(stderr, "heapinject: attached to pid %d (%s) in %.0f ms: %u allocator slots hooked\n", (int)t->pid,
                    t->comm, t->attach_ms, t->link.hello.slots_patched);
    }
    int code = say_left_out(s, o, "attached", false);
    if (!o->quiet && n) {
        fprintf(stderr, "heapinject: %zu of %zu processes attached in %.0f ms, sampling 1 in %s.\n", n, s->ntargets,
                ms, cli_fmt_bytes((double)o->rate, rate, sizeof(rate)));
        if (o->ttl_s)
            fprintf(stderr, "The profilers detach by themselves in %s unless detached earlier.\n",
                    cli_fmt_duration((double)o->ttl_s, ttl, sizeof(ttl)));
        if (ao.follow_forks)
            fprintf(stderr, "Children they fork from now on are profiled too, from their first allocation.\n");
        char sel[256];
        selection_words(o, sel, sizeof(sel));
        fprintf(stderr, "Next: 'heapinject snapshot %s', 'heapinject status %s', 'heapinject detach %s'.\n", sel, sel,
                sel);
    }
    /* Closing without OWN_SESSION leaves each agent running. */
    cli_session_close(s);
    free(s);
    return n ? code : (code ? code : CLI_EXIT_FAILURE);
}

int cli_many_snapshot(const struct cli_options *o)
{
    struct cli_report_options ro;
    struct cli_output_ctx octx;
    struct cli_output out;
    cli_output_options(&ro, &octx, o, o->pid);
    if (cli_output_check(&ro, o->output) < 0 || cli_output_open(&out, o->output, o->mode) < 0)
        return CLI_EXIT_USAGE;
    struct cli_session *s = selection(o);
    if (!s) {
        cli_output_close(&out);
        return CLI_EXIT_FAILURE;
    }
    /* A descendant without a profiler is no error: said quietly below. */
    size_t n = cli_session_connect_all(s, true);
    int code = say_left_out(s, o, "snapshotted", n > 0);
    /* --children: the children that exited since attach are in the
     * report by the snapshot each left (their files handed over). */
    size_t ended = o->children ? cli_session_add_ended(s) : 0;
    for (size_t i = 0; i < s->ntargets && !o->quiet; i++)
        if (s->targets[i].last)
            fprintf(stderr, "heapinject: pid %d (child of %d) exited since attach (%s %d): the snapshot it left "
                            "is in the report\n", (int)s->targets[i].pid, (int)s->targets[i].ppid,
                    s->targets[i].exit.signal ? "killed by signal" : "exit code",
                    s->targets[i].exit.signal ? s->targets[i].exit.signal : s->targets[i].exit.exit_code);
    n += ended;
    struct cli_profile merged;
    struct cli_gather_stats st;
    int rc = n ? cli_session_gather(s, &merged, &st) : -ENOENT;
    cli_session_close(s);
    if (rc < 0) {
        fprintf(stderr, "heapinject: no report: %s\n", rc == -ENOENT ? "no profiler answered" : strerror(-rc));
        cli_output_close(&out);
        free(s);
        return code ? code : CLI_EXIT_NOTATTACHED;
    }
    char note[512];
    int nn = snprintf(note, sizeof(note), "%zu processes, snapshots taken within %.1f ms of each other; %zu code "
                      "layout%s symbolized for them", st.taken, st.spread_ms, st.layouts, st.layouts == 1 ? "" : "s");
    if (st.ended && nn > 0 && (size_t)nn < sizeof(note))
        snprintf(note + nn, sizeof(note) - (size_t)nn, "; %zu exited since attach, in the report by the snapshot "
                 "each left as it ended", st.ended);
    ro.note = note;
    if (!o->quiet)
        fprintf(stderr, "heapinject: %zu snapshots in %.0f ms, within %.1f ms of each other; %zu code layout%s "
                        "symbolized in %.0f ms\n", st.taken, st.snapshot_ms, st.spread_ms, st.layouts,
                st.layouts == 1 ? "" : "s", st.symbolize_ms);
    rc = cli_output_commit_report(&out, &merged, &ro);
    cli_output_close(&out);
    if (rc == 0 && o->output && strcmp(o->output, "-") && !o->quiet)
        fprintf(stderr, "heapinject: wrote %s report to %s\n", o->format, o->output);
    cli_profile_free(&merged);
    free(s);
    return rc < 0 ? CLI_EXIT_FAILURE : code;
}

static void detach_one(struct cli_target *t, void *arg)
{
    (void)arg;
    if (cli_client_detach(&t->link) < 0) {
        t->code = cli_session_request_failed(t, "detach");
        return;
    }
    /* As `detach -p PID`: the agent acknowledges, then unhooks, closes and
     * removes its socket; wait for that. */
    if (cli_client_wait_closed(&t->link, 5000) < 0)
        fprintf(stderr, "heapinject: pid %d: the profiler acknowledged the detach but is still connected: %s\n",
                (int)t->pid, t->link.error);
    cli_session_close_target(t);
    cli_socket_wait_gone(t->sock.local);
}

int cli_many_detach(const struct cli_options *o)
{
    struct cli_session *s = selection(o);
    if (!s)
        return CLI_EXIT_FAILURE;
    size_t n = cli_session_connect_all(s, true);
    int code = say_left_out(s, o, "detached", n > 0);
    cli_session_each(s, CLI_TARGET_LINKED, detach_one, NULL);
    size_t good = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        const struct cli_target *t = &s->targets[i];
        if (t->state != CLI_TARGET_CLOSED || t->code != CLI_EXIT_OK)
            continue;
        char what[600];
        if (cli_attach_verify_unhooked(t->pid, what, sizeof(what)) == 0) {
            fprintf(stderr, "heapinject: detached from pid %d, but %s.\n", (int)t->pid, what);
            if (code == CLI_EXIT_OK)
                code = CLI_EXIT_FAILURE;
        } else {
            good++;
            if (o->verbose)
                fprintf(stderr, "heapinject: detached from pid %d: %s.\n", (int)t->pid, what);
        }
    }
    if (!o->quiet && n && good == n)
        fprintf(stderr, "heapinject: detached from %zu processes; every allocator slot of each read back: "
                        "none points into the profiler\n", n);
    else if (!o->quiet && n)
        fprintf(stderr, "heapinject: detached from %zu of %zu processes\n", good, n);
    free(s);
    return n ? code : (code ? code : CLI_EXIT_NOTATTACHED);
}

/* Whether an agent's socket named by pid is in one of our directories. */
static bool has_socket(pid_t pid)
{
    struct cli_sock_path c[CLI_SOCKET_CANDIDATES];
    int n = cli_paths_socket_candidates(pid, c);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (lstat(c[i].local, &st) == 0 && S_ISSOCK(st.st_mode))
            return true;
    }
    return false;
}

size_t cli_many_followed(pid_t pid, pid_t *out, size_t cap)
{
    if (!has_socket(pid))
        return 0;
    pid_t *kids = malloc(CLI_SESSION_MAX_TARGETS * 4 * sizeof(*kids));
    if (!kids)
        return 0;
    size_t nk = cli_children_descendants(pid, kids, CLI_SESSION_MAX_TARGETS * 4), n = 0;
    for (size_t i = 0; i < nk && n < cap; i++)
        if (has_socket(kids[i]))
            out[n++] = kids[i];
    free(kids);
    return n;
}
