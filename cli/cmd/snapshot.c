/* snapshot.c - `heapinject snapshot`: a report from the profiler attached
 * earlier, which keeps running. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/many.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "cli/link/memory_collect.h"
#include "cli/symbolize/symbolize.h"
#include "cli/process/proc.h"
#include "cli/process/seccomp_gate.h"
#include "cli/link/fill.h"
#include "cli/link/last_snapshot.h"
#include "injector/target.h"

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
    if (cli_many_selected(&o))
        return cli_many_snapshot(&o);

    cli_output_options(&ro, &octx, &o, o.pid);
    if (cli_output_check(&ro, o.output) < 0 || cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    /* A process that ended under `attach` left its last snapshot. */
    char last_path[PATH_MAX], last_note[320];
    int last = cli_last_snapshot_take(o.pid, &p, last_note, sizeof(last_note), last_path, sizeof(last_path));
    if (last < 0) {
        cli_output_close(&out);
        return CLI_EXIT_FAILURE;
    }
    if (last > 0) {
        ro.note = last_note;
        if (!o.quiet)
            fprintf(stderr, "heapinject: %s\n", last_note);
    } else {
        if (!(tg = cli_session_connect_one(&ss, o.pid, &code))) {
            cli_output_close(&out);
            return code;
        }
        rc = cli_client_snapshot(&tg->link, &p);
        if (rc < 0) {
            cli_output_close(&out);
            return cli_session_request_failed(tg, "snapshot");
        }
        p.memory = cli_memory_collect(o.pid, &tg->link, &p);
        cli_session_close(&ss);
    }
    p.pid = o.pid;
    const char *filled = cli_fill_from_proc(o.pid, &p);
    if (filled[0] && !ro.note)
        ro.note = filled;
    pid_t via = inj_target_live_task(o.pid); /* see emit() in cmd/profile.c */
    /* Gone: its files are taken to be where the cli sees them. */
    struct cli_symbolizer *sym = cli_symbolizer_new(via > 0 ? via : o.pid, last > 0 ? 1 : cli_proc_same_mntns(o.pid));
    if (!sym || cli_symbolizer_run(sym, &p) < 0)
        fprintf(stderr, "heapinject: symbolization failed: %s\n", strerror(ENOMEM));
    cli_profile_sort(&p);
    rc = cli_output_commit_report(&out, &p, &ro);
    cli_output_close(&out);
    if (rc == 0 && o.output && strcmp(o.output, "-") && !o.quiet)
        fprintf(stderr, "heapinject: wrote %s report to %s\n", o.format, o.output);
    cli_symbolizer_free(sym);
    cli_profile_free(&p);
    if (rc == 0 && last > 0) {
        unlink(last_path); /* handed over: nothing stays behind */
        return CLI_EXIT_NOPROC;
    }
    return rc < 0 ? CLI_EXIT_FAILURE : cli_gate_exit(o.pid, CLI_EXIT_OK);
}
