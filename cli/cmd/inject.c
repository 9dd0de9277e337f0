/* inject.c - `heapinject inject`: load any shared library into a live
 * process and optionally call a function in it (the injector on its own;
 * `heapinject -p` uses the same engine for the profiler). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/link/attach.h"
#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "injector/inject.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapinject inject -p PID [--via ptrace|gdb] [--timeout MS] [-v]\n"
            "                         LIBRARY [SYMBOL [STRING]]\n"
            "\n"
            "Loads LIBRARY into the running process PID with dlopen(RTLD_NOW) and, if\n"
            "SYMBOL is given, calls SYMBOL(STRING) in it (a function taking a const char *,\n"
            "or nothing, and returning int). The process keeps running; it is left as it\n"
            "was apart from the loaded library and what SYMBOL does.\n"
            "\n"
            "  -p, --pid PID        the process\n"
            "      --via METHOD     ptrace (default: one thread stopped briefly at a safe\n"
            "                       point) or gdb (runs gdb -p PID -batch)\n"
            "      --timeout MS     how long to wait for a thread outside malloc, the\n"
            "                       dynamic linker and signal handlers (default 5000)\n"
            "  -v, --verbose        progress on stderr\n"
            "  -h, --help           this text\n"
            "\n"
            "Prints the library's load address and the function's return value.\n"
            "Exit status: 0 ok, 1 failure (library not loadable, symbol missing),\n"
            "2 usage, 3 no such process or it exited, 4 permission denied,\n"
            "5 unsupported target (static, other architecture, seccomp), 6 already\n"
            "traced, 8 no safe point in time.\n");
}

static int parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_cmd_inject(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "pid", required_argument, NULL, 'p' },
        { "via", required_argument, NULL, 'm' },
        { "timeout", required_argument, NULL, 't' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct inj_options o = { .timeout_ms = 5000, .method = INJ_VIA_PTRACE };
    struct inj_result res;
    char real[PATH_MAX];
    long v;
    int c, rc;

    optind = 0;   /* glibc: restart scanning (main may have used getopt) */
    while ((c = getopt_long(argc, argv, "p:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_int(optarg, 1, INT_MAX, &v)) {
                fprintf(stderr, "heapinject inject: bad pid '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            o.pid = (pid_t)v;
            break;
        case 'm':
            if (!strcmp(optarg, "ptrace")) {
                o.method = INJ_VIA_PTRACE;
            } else if (!strcmp(optarg, "gdb")) {
                o.method = INJ_VIA_GDB;
            } else {
                fprintf(stderr, "heapinject inject: --via takes ptrace or gdb, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 't':
            if (parse_int(optarg, 1, 3600 * 1000, &v)) {
                fprintf(stderr, "heapinject inject: bad --timeout '%s' (milliseconds)\n", optarg);
                return CLI_EXIT_USAGE;
            }
            o.timeout_ms = (int)v;
            break;
        case 'v':
            o.verbose = true;
            break;
        case 'h':
            usage(stdout);
            return CLI_EXIT_OK;
        default:
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (!o.pid || optind >= argc || argc - optind > 3) {
        fprintf(stderr, "heapinject inject: %s\n",
                !o.pid ? "-p PID is required" : optind >= argc ? "LIBRARY is required"
                                                               : "too many arguments");
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    o.library = argv[optind];
    o.symbol = argc - optind >= 2 ? argv[optind + 1] : NULL;
    o.argument = argc - optind >= 3 ? argv[optind + 2] : NULL;

    rc = inj_inject(&o, &res);
    if (rc != INJ_OK) {
        fprintf(stderr, "heapinject: %s\n", res.error[0] ? res.error : "inject: failed");
        return cli_attach_exit_from_inj(rc);
    }
    printf("loaded %s at 0x%llx in pid %d\n", realpath(o.library, real) ? real : o.library,
           (unsigned long long)res.load_address, (int)o.pid);
    if (res.called) {
        if (o.argument)
            printf("called %s(\"%s\") = %lld\n", o.symbol, o.argument,
                   (long long)res.return_value);
        else
            printf("called %s(NULL) = %lld\n", o.symbol, (long long)res.return_value);
    }
    fflush(stdout);
    return CLI_EXIT_OK;
}
