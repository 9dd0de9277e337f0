/* attach.c - `heapinject attach`: attach a profiler that outlives the
 * command (detach.c, snapshot.c, rate.c and status.c find it afresh through
 * its socket, cli/process/paths.c, from any shell). */
#include <stdio.h>

#include "cli/session/session.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/many.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/util/fmt.h"
#include "cli/process/proc.h"

int cli_cmd_attach(int argc, char **argv)
{
    struct cli_options o;
    struct cli_session ss;
    struct cli_target *tg;
    int code = cli_options_parse_or_usage(CLI_CMD_ATTACH, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    if (cli_many_selected(&o))
        return cli_many_attach(&o);

    struct cli_attach_options ao = { .pid = o.pid, .rate = o.rate, .ttl_s = o.ttl_s, .via = o.via,
                                     .verbose = o.verbose, .follow_forks = o.follow_forks, .lazy_children = o.lazy_children,
                                     .pymalloc = o.pymalloc,
                                     /* nobody waits on the socket for a pushed snapshot: a file */
                                     .last_snapshot = true };
    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_attach(tg, &ao)) != CLI_EXIT_OK)
        return code;
    char rate[32], ttl[32], comm[64];
    if (!o.quiet) {
        fprintf(stderr, "heapinject: attached to pid %d (%s): %u allocator slots hooked, sampling 1 in %s.\n",
                (int)o.pid, cli_proc_comm(o.pid, comm, sizeof(comm)), tg->link.hello.slots_patched,
                cli_fmt_bytes((double)tg->link.hello.rate, rate, sizeof(rate)));
        if (o.follow_forks)
            fprintf(stderr, "Children it forks from now on are profiled too: 'heapinject snapshot -p CHILD'.\n");
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
