/* rate.c - `heapinject rate`: a new sampling rate for the profiler
 * attached earlier, without detaching it. */
#include <stdio.h>

#include "cli/session/session.h"
#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/util/fmt.h"
#include "cli/process/proc.h"

int cli_cmd_rate(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_RATE, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;

    if (!(tg = cli_session_connect_one(&ss, o.pid, &code)))
        return code;
    uint64_t was = tg->link.hello.rate;
    if (cli_client_set_rate(&tg->link, o.rate) < 0)
        return cli_session_request_failed(tg, "rate change");
    cli_session_close(&ss);
    if (!o.quiet) {
        char a[32], b[32], comm[64];
        fprintf(stderr, "heapinject: pid %d (%s) now samples 1 in %s allocated (was 1 in %s).\n", (int)o.pid,
                cli_proc_comm(o.pid, comm, sizeof(comm)), cli_fmt_bytes((double)o.rate, a, sizeof(a)),
                cli_fmt_bytes((double)was, b, sizeof(b)));
    }
    return CLI_EXIT_OK;
}
