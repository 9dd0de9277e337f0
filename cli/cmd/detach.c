/* detach.c - `heapinject detach`: the profiler attached earlier leaves, and
 * the GOT slots are read back to say so. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/link/attach.h"
#include "cli/link/last_snapshot.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/many.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/process/seccomp_gate.h"

int cli_cmd_detach(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_DETACH, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    if (cli_many_selected(&o))
        return cli_many_detach(&o);
    /* The children its followed forks gave a profiler leave with it,
     * rather than at their time-to-live. */
    pid_t kids[CLI_OPTIONS_MAX_PIDS - 1];
    size_t nk = cli_many_followed(o.pid, kids, CLI_OPTIONS_MAX_PIDS - 1);
    if (nk) {
        if (!o.quiet) {
            fprintf(stderr, "heapinject: pid %d: its %zu descendant%s with a profiler (attached with it by "
                            "--children, or forks followed since) %s detached too:",
                    (int)o.pid, nk, nk == 1 ? "" : "s", nk == 1 ? "is" : "are");
            for (size_t i = 0; i < nk; i++)
                fprintf(stderr, " %d", (int)kids[i]);
            fputc('\n', stderr);
        }
        memcpy(o.pids + 1, kids, nk * sizeof(kids[0]));
        o.npids = 1 + nk;
        return cli_many_detach(&o);
    }
    if (!(tg = cli_session_connect_one(&ss, o.pid, &code)))
        return code;
    if (cli_client_detach(&tg->link) < 0)
        return cli_session_request_failed(tg, "detach");
    /* The agent acknowledges first, then unhooks, closes and removes its
     * socket: wait for that, so that the process is detached when we say so
     * and a next command does not find the old socket. */
    if (cli_client_wait_closed(&tg->link, 5000) < 0)
        fprintf(stderr, "heapinject: pid %d: the profiler acknowledged the detach but is still connected: %s\n",
                (int)o.pid, tg->link.error);
    cli_session_close(&ss);
    cli_socket_wait_gone(tg->sock.local);
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
