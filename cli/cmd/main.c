/* main.c - heapinject's command dispatcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "cli/link/attach.h"
#include "injector/log.h"
#include "common/proto.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    { "attach", cli_cmd_attach },
    { "status", cli_cmd_status },
    { "snapshot", cli_cmd_snapshot },
    { "detach", cli_cmd_detach },
    { "rate", cli_cmd_rate },
    { "report", cli_cmd_report },
    { "diff", cli_cmd_diff },
    { "trim", cli_cmd_trim },
    { "census", cli_cmd_census },
    { "inject", cli_cmd_inject },
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapinject -p PID [options]          profile a live process until Ctrl-C or --duration\n"
            "       heapinject attach -p PID [options]   start profiling and return\n"
            "       heapinject status -p PID             is it attached, totals, memory, thread rates\n"
            "       heapinject snapshot -p PID [options] report from an attached profiler\n"
            "       heapinject detach -p PID             stop an attached profiler\n"
            "       heapinject rate -p PID --rate BYTES  change an attached profiler's sampling rate\n"
            "       heapinject trim -p PID               the allocator gives free memory back\n"
            "       heapinject census -p PID             the heap as it is: sizes, types, leaks, roots\n"
            "       heapinject report FILE [options]     a saved profile in another format\n"
            "       heapinject diff BASE FILE [options]  what grew between two saved profiles\n"
            "       heapinject inject -p PID LIBRARY [SYMBOL [STRING]]\n"
            "Run 'heapinject --help' for the options of the one-shot form and\n"
            "'heapinject COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    const char *timing = getenv("HEAPINJECT_TIMING");

    if (timing && !strcmp(timing, "1"))
        cli_attach_main_ns = inj_now_ns();
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    /* The one-shot form starts with an option: heapinject -p PID ... */
    if (argv[1][0] == '-') {
        if (!strcmp(argv[1], "--version")) {
            printf("heapinject %s (wire protocol %d)\n", HEAPINJECT_VERSION, HI_PROTO_VERSION);
            return CLI_EXIT_OK;
        }
        return cli_cmd_profile(argc, argv);
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    fprintf(stderr, "heapinject: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
