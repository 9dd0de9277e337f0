/* agent.c - `heapinject attach`, `snapshot` and `detach`: commands that
 * each do one thing to an agent that outlives them. Every invocation finds
 * the agent afresh through its socket (cli/process/paths.c), so they can come from
 * different shells, one after another. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/link/attach.h"
#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "cli/link/memory_collect.h"
#include "cli/util/fmt.h"
#include "cli/symbolize/symbolize.h"
#include "cli/process/proc.h"
#include "cli/process/seccomp_gate.h"
#include "cli/link/fill.h"
#include "injector/target.h"

/* A request to the attached agent failed: the process exited meanwhile
 * (CLI_EXIT_NOPROC) or the request did (CLI_EXIT_FAILURE). Says which and
 * closes its link. */
static int request_failed(struct cli_target *tg, const char *what)
{
    pid_t pid = tg->pid;
    bool died = cli_proc_exited_after_hangup(pid);
    if (died)
        fprintf(stderr, "heapinject: pid %d exited during the %s (%s)\n", (int)pid, what, tg->link.error);
    else
        fprintf(stderr, "heapinject: pid %d: %s failed: %s\n", (int)pid, what, tg->link.error);
    cli_session_close_target(tg);
    return died ? CLI_EXIT_NOPROC : CLI_EXIT_FAILURE;
}

int cli_cmd_attach(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_ATTACH, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;

    struct cli_attach_options ao = { .pid = o.pid, .rate = o.rate, .ttl_s = o.ttl_s, .via = o.via,
                                     .verbose = o.verbose };
    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_attach(tg, &ao)) != CLI_EXIT_OK)
        return code;
    char rate[32], ttl[32], comm[64];
    if (!o.quiet) {
        fprintf(stderr, "heapinject: attached to pid %d (%s): %u allocator slots hooked, sampling 1 in %s.\n",
                (int)o.pid, cli_proc_comm(o.pid, comm, sizeof(comm)), tg->link.hello.slots_patched,
                cli_fmt_bytes((double)tg->link.hello.rate, rate, sizeof(rate)));
        if (tg->link.hello.ttl_ns)
            fprintf(stderr, "The profiler detaches by itself in %s unless detached earlier.\n",
                    cli_fmt_duration((double)tg->link.hello.ttl_ns / 1e9, ttl, sizeof(ttl)));
        fprintf(stderr, "Next: 'heapinject status -p %d', 'heapinject snapshot -p %d', 'heapinject detach -p %d'.\n",
                (int)o.pid, (int)o.pid, (int)o.pid);
    }
    /* Closing without OWN_SESSION leaves the agent running. */
    cli_session_close(&ss);
    return CLI_EXIT_OK;
}

int cli_cmd_snapshot(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    struct cli_report_options ro;
    struct cli_output_ctx octx;
    struct cli_output out;
    struct cli_profile p;
    int code = cli_options_parse_or_usage(CLI_CMD_SNAPSHOT, argc, argv, &o), rc;
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;

    cli_output_options(&ro, &octx, &o, o.pid);
    if (cli_output_check(&ro, o.output) < 0 || cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_connect(tg, false)) != CLI_EXIT_OK) {
        cli_output_close(&out);
        return code;
    }
    rc = cli_client_snapshot(&tg->link, &p);
    if (rc < 0) {
        cli_output_close(&out);
        return request_failed(tg, "snapshot");
    }
    p.memory = cli_memory_collect(o.pid, &tg->link, &p);
    cli_session_close(&ss);
    p.pid = o.pid;
    const char *filled = cli_fill_from_proc(o.pid, &p);
    if (filled[0] && !ro.note)
        ro.note = filled;
    pid_t via = inj_target_live_task(o.pid); /* see emit() in cmd/profile.c */
    struct cli_symbolizer *sym = cli_symbolizer_new(via > 0 ? via : o.pid, cli_proc_same_mntns(o.pid));
    if (!sym || cli_symbolizer_run(sym, &p) < 0)
        fprintf(stderr, "heapinject: symbolization failed: %s\n", strerror(ENOMEM));
    cli_profile_sort(&p);
    rc = cli_output_commit_report(&out, &p, &ro);
    cli_output_close(&out);
    if (rc == 0 && o.output && strcmp(o.output, "-") && !o.quiet)
        fprintf(stderr, "heapinject: wrote %s report to %s\n", o.format, o.output);
    cli_symbolizer_free(sym);
    cli_profile_free(&p);
    return rc < 0 ? CLI_EXIT_FAILURE : cli_gate_exit(o.pid, CLI_EXIT_OK);
}

int cli_cmd_detach(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_DETACH, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;

    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_connect(tg, false)) != CLI_EXIT_OK)
        return code;
    if (cli_client_detach(&tg->link) < 0)
        return request_failed(tg, "detach");
    /* The agent acknowledges first, then unhooks, closes and removes its
     * socket: wait for that, so that the process is detached when we say so
     * and a next command does not find the old socket. */
    if (cli_client_wait_closed(&tg->link, 5000) < 0)
        fprintf(stderr, "heapinject: pid %d: the profiler acknowledged the detach but is still connected: %s\n",
                (int)o.pid, tg->link.error);
    cli_session_close(&ss);
    for (int i = 0; i < 100 && access(tg->sock.local, F_OK) == 0; i++) {
        struct timespec ts = { 0, 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
    char what[600];
    int v = cli_attach_verify_unhooked(o.pid, what, sizeof(what));
    if (v == 0) {
        fprintf(stderr, "heapinject: detached from pid %d, but %s.\n", (int)o.pid, what);
        return CLI_EXIT_FAILURE;
    }
    if (!o.quiet)
        fprintf(stderr, "heapinject: detached from pid %d: %s.\n", (int)o.pid, what);
    return cli_gate_exit(o.pid, CLI_EXIT_OK);
}

int cli_cmd_rate(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_RATE, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;

    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_connect(tg, false)) != CLI_EXIT_OK)
        return code;
    uint64_t was = tg->link.hello.rate;
    if (cli_client_set_rate(&tg->link, o.rate) < 0)
        return request_failed(tg, "rate change");
    cli_session_close(&ss);
    if (!o.quiet) {
        char a[32], b[32], comm[64];
        fprintf(stderr, "heapinject: pid %d (%s) now samples 1 in %s allocated (was 1 in %s).\n", (int)o.pid,
                cli_proc_comm(o.pid, comm, sizeof(comm)), cli_fmt_bytes((double)o.rate, a, sizeof(a)),
                cli_fmt_bytes((double)was, b, sizeof(b)));
    }
    return CLI_EXIT_OK;
}
