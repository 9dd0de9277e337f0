/* cmd.c - `heapinject census -p PID`.
 *
 * Connects to an attached agent or attaches for the census (owning the
 * session, detaching after), checks that the copy-on-write fork fits in
 * the memory left, asks for the census and writes it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/census/census.h"
#include "cli/census/cost.h"
#include "cli/link/census_freeze.h"
#include "cli/census/unreaped.h"
#include "cli/html/page.h"
#include "cli/census/precheck.h"
#include "cli/census/stopwatch.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/many.h"
#include "cli/cmd/output.h"
#include "cli/cmd/options.h"
#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"
#include "cli/link/attach.h"
#include "cli/process/limits.h"
#include "cli/process/proc.h"
#include "cli/process/slots.h"

#define CENSUS_WAIT_MS 130000 /* the agent stops a census at 120 s */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct census_doc {
    const struct cli_options *o;
    const struct cli_census *c;
    size_t n;                /* censuses; more than one: several processes */
};

static int write_census(FILE *f, void *arg)
{
    const struct census_doc *d = arg;
    if (!strcmp(d->o->format, "html"))
        return cli_html_write_census(d->c, d->o->top, f);
    bool json = !strcmp(d->o->format, "json");
    unsigned top = d->o->top ? d->o->top : json ? 100 : 10;
    if (d->n == 1 && !cli_many_selected(d->o)) {
        int rc = json ? cli_census_write_json(f, d->c, top) : cli_census_write_text(f, d->c, top);
        return rc < 0 ? -EIO : 0;
    }
    /* Several: json an array of the census objects, text one after the
     * other, each under its process's line. */
    if (json)
        fputs("[\n", f);
    for (size_t i = 0; i < d->n; i++) {
        char shown[256];
        if (json && i)
            fputs(",\n", f);
        else if (!json)
            fprintf(f, "%s=== pid %d (%s) ===\n", i ? "\n" : "", (int)d->c[i].pid,
                    cli_fmt_printable(d->c[i].comm, shown, sizeof(shown)));
        if ((json ? cli_census_write_json(f, &d->c[i], top) : cli_census_write_text(f, &d->c[i], top)) < 0)
            return -EIO;
    }
    if (json)
        fputs("]\n", f);
    return ferror(f) ? -EIO : 0;
}

/* Copies of censuses the process's parent has not reaped (unreaped.h):
 * said, they are ours. */
static void say_unreaped(pid_t pid)
{
    pid_t parent = 0, one = 0;
    int n = cli_census_unreaped(pid, 300, &parent, &one);
    if (n <= 0)
        return;
    char comm[64];
    cli_proc_comm(parent, comm, sizeof(comm));
    fprintf(stderr, "heapinject: pid %d's parent, pid %d (%s), has not reaped %d ended census cop%s (zombie%s, e.g. "
                    "pid %d: no memory, a process slot each): a census's copy is made the parent's child so that "
                    "pid %d never sees it, and only the parent can reap it; %s when pid %d reaps its children or "
                    "exits\n",
            (int)pid, (int)parent, comm, n, n == 1 ? "y" : "ies", n == 1 ? "" : "s", (int)one, (int)pid,
            n == 1 ? "it goes" : "they go", (int)parent);
}

/* The census of o.pid into *cp (free with cli_census_free), named, once
 * -o is open (before anything is attached). *ours: attached for it. */
static int census(struct cli_options o, struct cli_census *cp, bool *ours)
{
    struct cli_session ss;
    struct cli_target *tg;
    struct cli_census c;
    int code;

    if (!cli_proc_alive(o.pid)) {
        fprintf(stderr, "heapinject: pid %d: no such process.\n", (int)o.pid);
        return CLI_EXIT_NOPROC;
    }
    memset(&c, 0, sizeof(c));
    if ((code = cli_attach_check_is_process(o.pid, false)) != CLI_EXIT_OK ||
        (code = cli_census_check_cost(o.pid, o.force, o.quiet, &c.cost)) != CLI_EXIT_OK)
        return code;
    /* The census keeps the name as the process gave it (its text and JSON
     * writers escape it, once); messages here show it escaped. */
    char shown[4 * sizeof(c.comm)];
    cli_proc_comm_raw(o.pid, c.comm, sizeof(c.comm));
    cli_fmt_printable(c.comm, shown, sizeof(shown));
    if ((code = cli_census_precheck(o.pid, shown)) != CLI_EXIT_OK)
        return code;
    /* the agent's thread (if not attached yet) and the copy: two tasks */
    if ((code = cli_limits_check(o.pid, 2)) != CLI_EXIT_OK)
        return code;
    struct cli_attach_options ao = { .pid = o.pid, .rate = o.rate, .ttl_s = 2, .watch_cli = true, .via = o.via,
                                     .verbose = o.verbose };
    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_attach_for_request(tg, &ao)) != CLI_EXIT_OK)
        return code;
    /* Only a process that had our library can have lost it to an exec
     * (the socket may be served by something else: cli_fake_agent). */
    bool had_payload = cli_slots_payload_mapped(o.pid) == 1;
    c.pid = o.pid;
    struct cli_proc_mem m;
    if (cli_proc_mem(o.pid, &m) == 0)
        c.rss_before = m.rss;
    if (!o.quiet)
        fprintf(stderr, "heapinject: census of pid %d (%s): forking a copy and walking its heap...\n", (int)o.pid,
                shown);
    struct cli_census_cost cost = c.cost;
    double t0 = now_ms();
    cli_census_cost_start(o.pid, &cost, t0);
    struct cli_stopwatch sw;
    bool watched = cli_stopwatch_start(&sw, o.pid, tg->link.fd) == 0;
    int rc = cli_census_take(&tg->link, &c, CENSUS_WAIT_MS);
    bool stopped = watched && cli_stopwatch_stop(&sw);
    c.wall_ms = now_ms() - t0;
    cli_census_cost_end(o.pid, &cost, now_ms());
    c.cost = cost;
    if (cli_proc_mem(o.pid, &m) == 0)
        c.rss_after = m.rss;
    /* An exec takes the agent with the old image: the socket closes and
     * the census is lost; say that (exit 3), not "census failed", and ask
     * no detach of an agent that is gone. */
    char lost[512];
    bool execd = rc < 0 && !stopped && had_payload && cli_attach_explain_loss(o.pid, lost, sizeof(lost));
    if (execd) {
        fprintf(stderr, "heapinject: no census: %s\n", lost);
        cli_session_close(&ss);
        cli_census_free(&c);
        return CLI_EXIT_NOPROC;
    }
    if (tg->ours && !stopped) {
        if (cli_client_detach(&tg->link) < 0 || cli_client_wait_closed(&tg->link, 5000) < 0)
            fprintf(stderr, "heapinject: pid %d: detach was not confirmed (%s); the agent detaches by itself now "
                            "that heapinject disconnects\n", (int)o.pid, tg->link.error);
    }
    if (stopped) {
        fprintf(stderr, "heapinject: pid %d (%s): no census: the process was stopped (SIGSTOP or job control) "
                        "during the census, and its agent cannot answer while it is; heapinject let its threads go "
                        "and gave up after %.1f s. The process is left stopped, as it was asked to be (kill -CONT %d "
                        "resumes it); the copy ends by itself\n",
                (int)o.pid, c.comm, c.wall_ms / 1000.0, (int)o.pid);
        cli_session_close(&ss);
        cli_census_free(&c);
        return CLI_EXIT_BUSY;
    }
    if (rc < 0) /* before the close, which clears the client's error */
        fprintf(stderr, "heapinject: pid %d: census failed: %s\n", (int)o.pid, tg->link.error);
    cli_session_close(&ss);
    if (rc < 0) {
        cli_census_free(&c);
        return cli_proc_alive(o.pid) ? CLI_EXIT_FAILURE : CLI_EXIT_NOPROC;
    }
    if (c.end.status < 0) {
        fprintf(stderr, "heapinject: pid %d (%s): no census: %s%s\n", (int)o.pid, shown, c.end.why,
                tg->ours ? "; heapinject detached again" : "");
        code = c.end.status == -ENOTSUP || c.end.status == -EPERM ? CLI_EXIT_UNSUPPORTED : CLI_EXIT_FAILURE;
        cli_census_free(&c);
        return code;
    }
    cli_census_cost_keep(o.pid, &c.cost); /* the next census's prediction */
    if (tg->ours) /* attached only for the census: no session's history to tell */
        cli_census_drop_since_attach(&c);
    if (cli_census_name(&c) < 0)
        fprintf(stderr, "heapinject: census: some types and roots could not be named (out of memory)\n");
    *ours = tg->ours;
    *cp = c;
    return CLI_EXIT_OK;
}

/* -p PID: one census written. */
static int census_one(const struct cli_options *o, struct cli_output *out)
{
    struct cli_census c;
    bool ours = false;
    int code = census(*o, &c, &ours);
    if (code != CLI_EXIT_OK)
        return code;
    struct census_doc doc = { o, &c, 1 };
    code = cli_output_commit(out, write_census, &doc) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    if (!o->quiet && ours)
        fprintf(stderr, "heapinject: detached: the copy is gone, the process runs on as before\n");
    say_unreaped(o->pid);
    cli_census_free(&c);
    return code;
}

/* Several processes (issue 28): one census after the other (each copy is
 * checked against the memory left, taken and gone before the next), all
 * written at the end in one document. One that cannot be taken is said
 * and the others go on; the exit code is the first failure among the pids
 * given with -p, else of any when none was taken. */
static int census_many(const struct cli_options *o, struct cli_output *out)
{
    if (!strcmp(o->format, "html")) {
        fprintf(stderr, "heapinject census: --format html is one process's page: give one -p PID (json or text "
                        "for several)\n");
        return CLI_EXIT_USAGE;
    }
    struct cli_session *s = calloc(1, sizeof(*s));
    struct cli_census *cs = s ? calloc(CLI_SESSION_MAX_TARGETS, sizeof(*cs)) : NULL;
    if (!cs) {
        free(s);
        return CLI_EXIT_FAILURE;
    }
    cli_session_init(s);
    if (!cli_session_select(s, o->pids, o->npids, o->children, o->cgroup)) {
        fprintf(stderr, "heapinject: no process selected\n");
        free(cs);
        free(s);
        return CLI_EXIT_NOPROC;
    }
    struct cli_many_failures failed = { CLI_EXIT_OK, CLI_EXIT_OK };
    size_t n = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        const struct cli_target *t = &s->targets[i];
        struct cli_options one = *o;
        bool ours = false;
        one.pid = t->pid;
        int code = census(one, &cs[n], &ours);
        if (code == CLI_EXIT_OK) {
            n++;
            say_unreaped(t->pid);
            continue;
        }
        fprintf(stderr, "heapinject: pid %d (%s): no census: %s\n", (int)t->pid, t->comm,
                cli_session_code_words(code));
        cli_many_note_failure(&failed, o, t->pid, code);
    }
    int code = n ? CLI_EXIT_OK : failed.first;
    if (n) {
        struct census_doc doc = { o, cs, n };
        if (cli_output_commit(out, write_census, &doc) < 0)
            code = CLI_EXIT_FAILURE;
        if (!o->quiet)
            fprintf(stderr, "heapinject: %zu of %zu processes censused, one after the other; each copy is gone\n", n,
                    s->ntargets);
    }
    for (size_t i = 0; i < n; i++)
        cli_census_free(&cs[i]);
    free(cs);
    free(s);
    return failed.first_given != CLI_EXIT_OK ? failed.first_given : code;
}

int cli_cmd_census(int argc, char **argv)
{
    struct cli_options o;
    struct cli_output out;
    int code;

    if ((code = cli_options_parse_or_usage(CLI_CMD_CENSUS, argc, argv, &o)) != 0)
        return code < 0 ? CLI_EXIT_OK : code;
    if (!o.pid && !cli_many_selected(&o)) {
        fprintf(stderr, "heapinject census: -p PID is required\n");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "html")) {
        fprintf(stderr, "heapinject census: --format: a census is written as text, json or html, not %s\n", o.format);
        return CLI_EXIT_USAGE;
    }
    if (cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    code = cli_many_selected(&o) ? census_many(&o, &out) : census_one(&o, &out);
    cli_output_close(&out);
    return code;
}
