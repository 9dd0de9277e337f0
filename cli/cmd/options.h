/* options.h - command-line options of heapinject's commands, and their help. */
#ifndef HI_CLI_OPTIONS_H
#define HI_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/report/views.h"
#include "injector/inject.h"

enum cli_command {
    CLI_CMD_PROFILE,   /* heapinject -p PID: the one-shot session */
    CLI_CMD_ATTACH,
    CLI_CMD_STATUS,
    CLI_CMD_SNAPSHOT,
    CLI_CMD_DETACH,
    CLI_CMD_REPORT,    /* heapinject report FILE: re-render a saved profile */
    CLI_CMD_DIFF,      /* heapinject diff BASE FILE: what grew */
    CLI_CMD_TRIM,      /* heapinject trim -p PID: the allocator gives free memory back */
    CLI_CMD_CENSUS,    /* heapinject census -p PID: the heap as it is */
    CLI_CMD_RATE,      /* heapinject rate -p PID --rate N: change an attached profiler's rate */
};

/* Profiles carry the process's maps, paths and command line: private by
 * default. */
#define CLI_OPTIONS_DEFAULT_MODE 0600

/* -p PID,PID,...: at most this many pids given (--children may add more). */
#define CLI_OPTIONS_MAX_PIDS 256

struct cli_options {
    enum cli_command cmd;
    pid_t pid;               /* -p, required: the first pid given */
    pid_t pids[CLI_OPTIONS_MAX_PIDS]; /* -p PID,PID,...: every pid, in order, no repeats */
    size_t npids;
    bool children;           /* --children: the pids' descendants too */
    const char *cgroup;      /* --cgroup PATH: every process of a cgroup v2 directory */
    const char *unit;        /* --unit NAME: as given; its cgroup is put in cgroup */
    double duration_s;       /* --duration; < 0: not given */
    uint64_t rate;           /* --rate; HI_DEFAULT_RATE when not given */
    bool have_rate;          /* --rate was given */
    bool leaks;              /* --leaks */
    const char *format;      /* --format (default "text") */
    const char *output;      /* -o; NULL: stdout */
    mode_t mode;             /* --mode: permissions of files written (default 0600) */
    enum inj_method via;     /* --via */
    uint64_t ttl_s;          /* --ttl */
    bool have_ttl;
    uint64_t dump_every;     /* --dump-every BYTES; 0: off */
    bool dump_on_peak;       /* --dump-on-peak */
    unsigned top;            /* --top N; 0: default */
    enum cli_view by;        /* --by (text and json); default CLI_VIEW_STACK */
    double interval_s;       /* status --interval */
    const char *value;       /* --value for collapsed/svg */
    bool no_symbols;         /* --no-symbols */
    bool census;             /* heapinject -p --census */
    bool no_crash_snapshot;  /* --no-crash-snapshot: no handler for fatal signals */
    bool no_pressure_snapshot; /* --no-pressure-snapshot: memory pressure not watched */
    bool verbose;            /* -v */
    bool quiet;              /* -q: no progress on stderr */
    bool force;              /* census --force: past the memory check */
    bool follow_forks;       /* attach --follow-forks: fork children get agents */
    bool lazy_children;      /* attach --lazy-children: their agents wait until they lived a while */
    bool pymalloc;           /* --pymalloc: CPython's small objects sampled too */
    bool help;               /* --help was given: help printed, exit 0 */
    char *const *files;      /* report: FILE... ; diff: BASE FILE (in argv) */
    int nfiles;
};

/* Parses argv (argv[0] is the command name or the program name for the
 * one-shot form) into o. Returns 0, or -EINVAL with a message for the user
 * in err. --help prints the command's help to stdout and sets o->help. */
int cli_options_parse(enum cli_command cmd, int argc, char **argv, struct cli_options *o, char *err,
                      size_t errlen);

/* cli_options_parse for a command's entry point: on a usage error prints
 * it with where to find the options and returns CLI_EXIT_USAGE; after
 * --help returns -1 (the command ends with CLI_EXIT_OK); else 0. */
int cli_options_parse_or_usage(enum cli_command cmd, int argc, char **argv, struct cli_options *o);

/* The help text of a command. */
void cli_options_help(enum cli_command cmd, FILE *out);

/* Name of the command as typed ("heapinject", "attach", ...). */
const char *cli_command_name(enum cli_command cmd);

#endif /* HI_CLI_OPTIONS_H */
