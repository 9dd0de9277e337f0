/* options.c - getopt_long parsing and help text for every command. */
#include "cli/cmd/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"
#include "cli/util/parse.h"
#include "cli/report/report.h"
#include "cli/session/unit.h"
#include "common/config.h"

enum {
    OPT_DURATION = 256, OPT_RATE, OPT_LEAKS, OPT_FORMAT, OPT_VIA, OPT_TTL, OPT_DUMP_EVERY,
    OPT_DUMP_ON_PEAK, OPT_TOP, OPT_INTERVAL, OPT_VALUE, OPT_NO_SYMBOLS, OPT_HELP, OPT_BY, OPT_CENSUS, OPT_MODE,
    OPT_NO_CRASH_SNAPSHOT, OPT_NO_PRESSURE_SNAPSHOT, OPT_FORCE, OPT_FOLLOW_FORKS, OPT_PYMALLOC, OPT_CHILDREN, OPT_CGROUP,
    OPT_UNIT, OPT_LAZY_CHILDREN,
};

#define M(c) (1u << (c))
#define LIVE (M(CLI_CMD_PROFILE) | M(CLI_CMD_ATTACH) | M(CLI_CMD_STATUS) | M(CLI_CMD_SNAPSHOT) | M(CLI_CMD_DETACH) | \
              M(CLI_CMD_TRIM) | M(CLI_CMD_CENSUS) | M(CLI_CMD_RATE))
#define ALL (LIVE | M(CLI_CMD_REPORT) | M(CLI_CMD_DIFF))
#define REPORTING (M(CLI_CMD_PROFILE) | M(CLI_CMD_SNAPSHOT) | M(CLI_CMD_REPORT) | M(CLI_CMD_DIFF))

/* Commands that take several processes (-p PID,PID,... and --children). */
#define MANY (M(CLI_CMD_PROFILE) | M(CLI_CMD_ATTACH) | M(CLI_CMD_STATUS) | M(CLI_CMD_SNAPSHOT) | M(CLI_CMD_DETACH) | \
              M(CLI_CMD_TRIM) | M(CLI_CMD_CENSUS))

struct opt_def {
    struct option lo;
    unsigned commands; /* bit per enum cli_command that accepts it */
};

static const struct opt_def defs[] = {
    { { "pid", required_argument, NULL, 'p' }, LIVE },
    { { "duration", required_argument, NULL, OPT_DURATION }, M(CLI_CMD_PROFILE) },
    { { "rate", required_argument, NULL, OPT_RATE }, M(CLI_CMD_PROFILE) | M(CLI_CMD_ATTACH) | M(CLI_CMD_RATE) },
    { { "leaks", no_argument, NULL, OPT_LEAKS }, REPORTING },
    { { "format", required_argument, NULL, OPT_FORMAT }, REPORTING | M(CLI_CMD_STATUS) | M(CLI_CMD_CENSUS) },
    { { "output", required_argument, NULL, 'o' }, REPORTING | M(CLI_CMD_CENSUS) },
    { { "mode", required_argument, NULL, OPT_MODE }, REPORTING | M(CLI_CMD_CENSUS) },
    { { "via", required_argument, NULL, OPT_VIA },
      M(CLI_CMD_PROFILE) | M(CLI_CMD_ATTACH) | M(CLI_CMD_TRIM) | M(CLI_CMD_CENSUS) },
    { { "ttl", required_argument, NULL, OPT_TTL }, M(CLI_CMD_ATTACH) },
    { { "follow-forks", no_argument, NULL, OPT_FOLLOW_FORKS }, M(CLI_CMD_ATTACH) },
    { { "lazy-children", no_argument, NULL, OPT_LAZY_CHILDREN }, M(CLI_CMD_ATTACH) },
    { { "pymalloc", no_argument, NULL, OPT_PYMALLOC }, M(CLI_CMD_PROFILE) | M(CLI_CMD_ATTACH) },
    { { "dump-every", required_argument, NULL, OPT_DUMP_EVERY }, M(CLI_CMD_PROFILE) },
    { { "dump-on-peak", no_argument, NULL, OPT_DUMP_ON_PEAK }, M(CLI_CMD_PROFILE) },
    { { "top", required_argument, NULL, OPT_TOP }, REPORTING | M(CLI_CMD_CENSUS) },
    { { "by", required_argument, NULL, OPT_BY }, REPORTING },
    { { "interval", required_argument, NULL, OPT_INTERVAL }, M(CLI_CMD_STATUS) },
    { { "value", required_argument, NULL, OPT_VALUE }, REPORTING },
    { { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS }, REPORTING },
    { { "census", no_argument, NULL, OPT_CENSUS }, M(CLI_CMD_PROFILE) },
    { { "no-crash-snapshot", no_argument, NULL, OPT_NO_CRASH_SNAPSHOT }, M(CLI_CMD_PROFILE) },
    { { "no-pressure-snapshot", no_argument, NULL, OPT_NO_PRESSURE_SNAPSHOT }, M(CLI_CMD_PROFILE) },
    { { "force", no_argument, NULL, OPT_FORCE }, M(CLI_CMD_CENSUS) | M(CLI_CMD_PROFILE) },
    { { "children", no_argument, NULL, OPT_CHILDREN }, MANY },
    { { "cgroup", required_argument, NULL, OPT_CGROUP }, MANY },
    { { "unit", required_argument, NULL, OPT_UNIT }, MANY },
    { { "verbose", no_argument, NULL, 'v' }, ALL },
    { { "quiet", no_argument, NULL, 'q' }, ALL },
    { { "help", no_argument, NULL, OPT_HELP }, ALL },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

const char *cli_command_name(enum cli_command cmd)
{
    switch (cmd) {
    case CLI_CMD_PROFILE: return "heapinject";
    case CLI_CMD_ATTACH: return "attach";
    case CLI_CMD_STATUS: return "status";
    case CLI_CMD_SNAPSHOT: return "snapshot";
    case CLI_CMD_DETACH: return "detach";
    case CLI_CMD_TRIM: return "trim";
    case CLI_CMD_RATE: return "rate";
    case CLI_CMD_CENSUS: return "census";
    case CLI_CMD_REPORT: return "report";
    case CLI_CMD_DIFF: return "diff";
    }
    return "?";
}

static const char report_opts_help[] =
    "  --format FORMAT     report format: %s (default text)\n"
    "  -o, --output FILE   write the report to FILE instead of stdout (checked before\n"
    "                      anything else is done; FILE appears only once complete)\n"
    "  --mode OCTAL        permissions of a file written by -o (default 0600: a\n"
    "                      profile names the process's libraries and paths)\n"
    "  --leaks             only blocks still live, ranked by live bytes, with their ages,\n"
    "                      plus the stacks whose live bytes grow steadily\n"
    "  --top N             stacks, functions or groups shown in the text report\n"
    "                      (default 10)\n"
    "  --by VIEW           text and json: stack (default: the top stacks and their\n"
    "                      frames), function or module (estimated live and allocated\n"
    "                      bytes and objects, flat: in the innermost frame, cum:\n"
    "                      anywhere in the stack), thread (the thread that made\n"
    "                      each stack's first sample), or process (a report of\n"
    "                      several processes); other formats ignore --by\n"
    "  --value V           collapsed/svg value: live_bytes (default), alloc_bytes,\n"
    "                      live_objects, alloc_objects\n"
    "  --no-symbols        pprof: addresses and mappings only (pprof symbolizes)\n";

void cli_options_help(enum cli_command cmd, FILE *out)
{
    char names[256];
    cli_report_names(names, sizeof(names));
    switch (cmd) {
    case CLI_CMD_PROFILE:
        fprintf(out,
                "usage: heapinject -p PID[,PID...] [--children] [options]\n"
                "Attach a sampling heap profiler to the running process PID, profile it until\n"
                "--duration ends or Ctrl-C, detach, and write a report of the call stacks that\n"
                "hold the memory. The process keeps running, unchanged, afterwards.\n\n"
                "  -p, --pid PID       process to profile (required); PID,PID,... several,\n"
                "                      attached at once, in one report\n"
                "  --children          the processes' descendants alive at attach too (a\n"
                "                      pre-fork server's master and its workers)\n"
                "  --cgroup PATH       every process of a cgroup v2 directory (PATH under\n"
                "                      /sys/fs/cgroup, or relative to it: a systemd service is\n"
                "                      system.slice/NAME.service); with or instead of -p\n"
                "  --unit NAME         a systemd unit's processes: its cgroup (NAME or\n"
                "                      NAME.service in any slice) found without systemctl\n"
                "  --duration SECONDS  stop after this long (default: until Ctrl-C; when stdin\n"
                "                      is not a terminal: 10 s). Suffixes ms, s, m, h.\n"
                "  --rate BYTES        sample one allocation per BYTES allocated on average\n"
                "                      (default " HI_DEFAULT_RATE_TEXT "; 1 records every allocation). K, M, G.\n");
        fprintf(out, report_opts_help, names);
        fprintf(out,
                "  --dump-every BYTES  also write a profile each time the process allocated\n"
                "                      BYTES more (numbered files: FILE.0001.EXT, ...; FILE\n"
                "                      still gets the report of the whole session)\n"
                "  --dump-on-peak      also write a profile when the live heap reaches a new\n"
                "                      high (at least 10%% above the last one written)\n"
                "  --census            at the end, also a census of the heap as it is (text,\n"
                "                      json, html: sizes, C++ types, unreachable blocks, roots; see\n"
                "                      'heapinject census --help'). Refused before attach, like\n"
                "                      the census, when its copy could run the process's\n"
                "                      memory cgroup out of memory (exit 5)\n"
                "  --force             with --census: take it even then\n"
                "  --pymalloc          a Python process: its small objects (pymalloc) sampled\n"
                "                      too, as stacks of kind pymalloc. Off by default: it\n"
                "                      slows allocation-heavy Python code (a quarter on\n"
                "                      Debian's python3.11)\n"
                "  --no-crash-snapshot\n"
                "                      no snapshot at a fatal signal. By default, when the\n"
                "                      process gets SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT\n"
                "                      and has no handler of its own, that thread waits (1 s\n"
                "                      at most) in a handler of heapinject's while a last\n"
                "                      snapshot is taken, then dies of the signal as it would\n"
                "                      have\n"
                "  --no-pressure-snapshot\n"
                "                      no snapshot at memory pressure. By default one is\n"
                "                      taken when its memory cgroup is at 90%% of its limit\n"
                "                      or the system has under 5%% available (one a second)\n"
                "  --via ptrace|gdb    how to load the profiler into the process (default ptrace)\n"
                "  -q, --quiet         no progress messages\n"
                "  -v, --verbose       tell what the injector does\n\n"
                "Other commands (heapinject COMMAND --help for their options):\n"
                "  attach    start profiling and return; the profiler stays in the process\n"
                "  status    is a profiler attached, rates, totals, memory, threads\n"
                "  snapshot  write a report from an attached profiler\n"
                "  detach    stop an attached profiler and remove its hooks\n"
                "  trim      ask the allocator to give free memory back; RSS before/after\n"
                "  census    the heap as it is: sizes, C++ types, leaked blocks, what holds it\n"
                "  report    write a saved profile (json, pprof, heap) in another format\n"
                "  diff      what grew between two saved profiles\n"
                "  inject    load any shared library into a process\n\n"
                "If the process dies during the session, the report of the last snapshot\n"
                "(taken every 2 s) is written, saying how long before the end it was taken.\n\n"
                "Exit status: 0 ok, 1 failure, 2 usage (or -o cannot be written), 3 no such\n"
                "process or it exited, 4 permission denied, 5 unsupported process, 6 busy\n"
                "(traced or already attached), 7 not attached, 8 no safe point in time (within\n"
                "5 s every thread stayed inside malloc, the dynamic linker, fork/exit, or a\n"
                "signal handler that interrupted one of those or runs on an alternate signal\n"
                "stack; a handler that interrupted anything else, as PostgreSQL's walwriter\n"
                "and launchers live in, is a safe point; the process is unchanged: retry), 9\n"
                "bad profile file.\n"
                "See heapinject(1).\n");
        break;
    case CLI_CMD_ATTACH:
        fprintf(out,
                "usage: heapinject attach -p PID [--rate BYTES] [--ttl SECONDS] [--follow-forks]\n"
                "                         [--lazy-children] [--pymalloc] [--via ptrace|gdb]\n"
                "Start profiling PID and return at once; the profiler keeps sampling inside the\n"
                "process. Read it with 'heapinject snapshot -p PID' and 'heapinject status -p\n"
                "PID'; stop it with 'heapinject detach -p PID'.\n\n"
                "  -p, --pid PID       process to profile (required)\n"
                "  -p PID,PID,...      several processes at once; --children: their descendants\n"
                "                      too; --cgroup PATH: a cgroup v2 directory's processes;\n"
                "                      --unit NAME: a systemd unit's (NAME.service)\n"
                "  --children          also follows forks (as --follow-forks): the children\n"
                "                      forked later are in 'snapshot -p PID --children', and\n"
                "                      'detach -p PID' detaches them too\n"
                "  --rate BYTES        mean bytes between samples (default " HI_DEFAULT_RATE_TEXT ")\n"
                "  --ttl SECONDS       the profiler detaches by itself after this long\n"
                "                      (default %u s; 0: stays until detach)\n"
                "  --follow-forks      a child PID forks while attached gets a profiler of its\n"
                "                      own from its first allocation (its socket named by its\n"
                "                      pid: 'heapinject snapshot -p CHILD'); it leaves with the\n"
                "                      parent's ttl, or 'heapinject detach -p CHILD'\n"
                "  --lazy-children     with --children or --follow-forks: a followed child's\n"
                "                      socket and profiler thread start only at its first\n"
                "                      sampled allocation 150 ms or more after its fork; one\n"
                "                      that ends before leaves its last snapshot all the same.\n"
                "                      Experimental: a fork that samples nothing costs about\n"
                "                      a third less; pgbench -C was within noise. Until then\n"
                "                      'snapshot -p CHILD' says its profiler has not started\n"
                "                      (exit 7), and a child that never samples again keeps\n"
                "                      our hooks, as plain forwards, until it exits\n"
                "  --pymalloc          a Python process: its small objects (pymalloc) sampled\n"
                "                      too, as stacks of kind pymalloc. Off by default: it\n"
                "                      slows allocation-heavy Python code (a quarter on\n"
                "                      Debian's python3.11)\n"
                "  --via ptrace|gdb    injection method (default ptrace)\n"
                "  -v, --verbose       tell what the injector does\n",
                HI_DEFAULT_TTL_S);
        break;
    case CLI_CMD_STATUS:
        fprintf(out,
                "usage: heapinject status -p PID [--interval SECONDS] [--format text|json]\n"
                "Tell whether a profiler is attached to PID and show its sampling rate, the\n"
                "totals since attach, the process's memory (RSS split by holder: heap in use,\n"
                "heap free, mmap, stacks, files, other; with a profiler attached the allocator's\n"
                "own figures too) and the allocation rate of each thread. Exit status 7 when\n"
                "not attached (the memory is still shown).\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  -p PID,PID,...      several processes at once; --children: their descendants\n"
                "                      too; --cgroup PATH: a cgroup v2 directory's processes;\n"
                "                      --unit NAME: a systemd unit's (NAME.service)\n"
                "  --interval SECONDS  measure thread rates over this long (default 1)\n"
                "  --format text|json  json: one object with \"memory\" as in the JSON report\n");
        break;
    case CLI_CMD_SNAPSHOT:
        fprintf(out,
                "usage: heapinject snapshot -p PID [options]\n"
                "Write a report from the profiler attached to PID (see 'heapinject attach').\n"
                "The profiler stays attached.\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  -p PID,PID,...      several processes at once; --children: their descendants\n"
                "                      too; --cgroup PATH: a cgroup v2 directory's processes;\n"
                "                      --unit NAME: a systemd unit's (NAME.service)\n");
        fprintf(out, report_opts_help, names);
        break;
    case CLI_CMD_REPORT:
        fprintf(out,
                "usage: heapinject report FILE... [options]\n"
                "Write a saved profile (heapinject's json, pprof or heap format) again, in any\n"
                "format. Profiles saved without symbols are symbolized from the files they name.\n"
                "Several files (the processes of a service) make one report: each stack keeps\n"
                "its process's pid, and the duration is from the first attach to the last\n"
                "snapshot. Of two snapshots of one session only the later one counts.\n\n");
        fprintf(out, report_opts_help, names);
        break;
    case CLI_CMD_DIFF:
        fprintf(out,
                "usage: heapinject diff BASE FILE [options]\n"
                "Write what grew from the saved profile BASE to the saved profile FILE: stacks\n"
                "matched by their functions, values FILE - BASE (growth only).\n\n");
        fprintf(out, report_opts_help, names);
        break;
    case CLI_CMD_TRIM:
        fprintf(out,
                "usage: heapinject trim -p PID [--via ptrace|gdb]\n"
                "Ask the allocator of PID to give its free memory back to the kernel (glibc\n"
                "malloc_trim(0), jemalloc arena.<all>.purge, tcmalloc ReleaseFreeMemory,\n"
                "mimalloc mi_collect), from heapinject's agent thread inside the process, and\n"
                "print RSS before and after. Attaches for the call and detaches after (an\n"
                "attached profiler is used and left attached). An allocator without such a\n"
                "call is left alone (exit status 5).\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  -p PID,PID,...      several processes, one after the other; --children:\n"
                "                      their descendants too; --cgroup PATH, --unit NAME: a\n"
                "                      cgroup's or a systemd unit's processes\n"
                "  --via ptrace|gdb    injection method (default ptrace)\n");
        break;
    case CLI_CMD_CENSUS:
        fprintf(out,
                "usage: heapinject census -p PID [--format text|json|html] [-o FILE] [--top N]\n"
                "A census of the heap as it is now, allocated before attach or since: every\n"
                "block of glibc malloc in use and free, grouped by size and by C++ type (the\n"
                "vtable its first word points to), the blocks no pointer was found to (leaked,\n"
                "or held in a form no scan sees), and the globals and thread stacks that hold\n"
                "the most; in a CPython process (3.8 to 3.13), its objects by type too.\n"
                "Taken in a copy-on-write fork of the process, so the process only\n"
                "waits while the fork copies its page tables (the stall is printed); the copy\n"
                "costs memory only for pages the process writes meanwhile, and is checked\n"
                "against the memory free first. Attaches for the census and detaches after\n"
                "(an attached profiler is used and left attached; its samples then say what\n"
                "was allocated since attach).\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  -p PID,PID,...      several processes, one after the other (each copy is\n"
                "                      checked and gone before the next); --children, --cgroup\n"
                "                      PATH, --unit NAME as for attach. json: an array of\n"
                "                      census objects; text: one after the other; not html\n"
                "  --format text|json|html  json: the \"census\" object of docs/JSON.md;\n"
                "                      html: one page to open in a browser\n"
                "  -o, --output FILE   write the census to FILE instead of stdout\n"
                "  --mode OCTAL        permissions of FILE (default 0600)\n"
                "  --top N             rows per table (default 10; json and html default 100)\n"
                "  --via ptrace|gdb    injection method (default ptrace)\n"
                "  --force             take it even when the copy could, at worst, run the\n"
                "                      process's memory cgroup (or the system) out of memory\n"
                "Exit status 5 when the process does not use glibc malloc, or when the copy\n"
                "could need more memory than is left (the figures are printed; see --force).\n");
        break;
    case CLI_CMD_RATE:
        fprintf(out,
                "usage: heapinject rate -p PID --rate BYTES\n"
                "Change the sampling rate of the profiler attached to PID (by 'heapinject\n"
                "attach') without detaching: from the next allocation of each thread on, a\n"
                "sample is taken every BYTES allocated on average. What was sampled before\n"
                "stays, with the estimates of its own rate.\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  --rate BYTES        mean bytes between samples (examples: 1, 64K, 1M),\n"
                "                      " HI_RATE_RANGE_TEXT "\n");
        break;
    case CLI_CMD_DETACH:
        fprintf(out,
                "usage: heapinject detach -p PID\n"
                "Stop the profiler attached to PID: its hooks are removed and the process\n"
                "runs as before. Its descendants that have a profiler (attached with it by\n"
                "'attach --children', or children whose forks were followed) are detached\n"
                "with it.\n\n"
                "  -p, --pid PID       the process (required)\n"
                "  -p PID,PID,...      several processes at once; --children: their descendants\n"
                "                      too; --cgroup PATH: a cgroup v2 directory's processes;\n"
                "                      --unit NAME: a systemd unit's (NAME.service)\n");
        break;
    }
}

__attribute__((format(printf, 3, 4)))
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static int parse_pid(const char *s, pid_t *pid);

/* -p PID or -p PID,PID,... (a pid given twice counts once). */
static int parse_pids(const char *s, struct cli_options *o)
{
    char one[32];
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        pid_t pid;
        if (n == 0 || n >= sizeof(one))
            return -EINVAL;
        memcpy(one, s, n);
        one[n] = '\0';
        if (parse_pid(one, &pid) < 0)
            return -EINVAL;
        bool seen = false;
        for (size_t i = 0; i < o->npids && !seen; i++)
            seen = o->pids[i] == pid;
        if (!seen) {
            if (o->npids == CLI_OPTIONS_MAX_PIDS)
                return -E2BIG;
            o->pids[o->npids++] = pid;
        }
        s += n;
        if (*s == ',' && !*++s)
            return -EINVAL;
    }
    if (!o->npids)
        return -EINVAL;
    o->pid = o->pids[0];
    return 0;
}

static int parse_pid(const char *s, pid_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > INT_MAX)
        return -EINVAL;
    *pid = (pid_t)v;
    return 0;
}

int cli_options_parse(enum cli_command cmd, int argc, char **argv, struct cli_options *o, char *err,
                      size_t errlen)
{
    struct option longopts[NDEFS + 1];
    size_t nl = 0;
    const char *name = cli_command_name(cmd);
    int c;

    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->duration_s = -1;
    o->format = "text";
    o->via = INJ_VIA_PTRACE;
    o->ttl_s = HI_DEFAULT_TTL_S;
    o->rate = HI_DEFAULT_RATE; /* the one place the cli applies the default */
    o->interval_s = 1.0;
    o->mode = CLI_OPTIONS_DEFAULT_MODE;
    err[0] = '\0';

    /* Every long option is known to getopt, so that one given to the wrong
     * command gets a precise message instead of "unrecognized". */
    for (size_t i = 0; i < NDEFS; i++)
        longopts[nl++] = defs[i].lo;
    memset(&longopts[nl], 0, sizeof(longopts[nl]));

    optind = 0; /* GNU: full reinitialization (parsed more than once in tests) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:o:vqh", longopts, NULL)) != -1) {
        const struct opt_def *d = NULL;
        for (size_t i = 0; i < NDEFS; i++)
            if (defs[i].lo.val == c || (c == 'h' && defs[i].lo.val == OPT_HELP))
                d = &defs[i];
        if (c == '?')
            return bad(err, errlen, "%s: unknown option '%s'", name, argv[optind - 1]);
        if (c == ':')
            return bad(err, errlen, "%s: option '%s' needs a value", name, argv[optind - 1]);
        if (d && !(d->commands & M(cmd)))
            return bad(err, errlen, "%s: option --%s does not apply to this command", name, d->lo.name);
        switch (c) {
        case 'p':
            o->npids = 0;
            if (parse_pids(optarg, o) < 0)
                return bad(err, errlen, "%s: -p: '%s' is not a process id or a list PID,PID,... (at most %d)",
                           name, optarg, CLI_OPTIONS_MAX_PIDS);
            if (o->npids > 1 && !(M(cmd) & MANY))
                return bad(err, errlen, "%s: -p: one process at a time ('%s' names %zu)", name, optarg, o->npids);
            break;
        case OPT_CHILDREN:
            o->children = true;
            break;
        case OPT_CGROUP:
            o->cgroup = optarg;
            break;
        case OPT_UNIT:
            o->unit = optarg;
            break;
        case OPT_DURATION:
            if (cli_parse_duration(optarg, &o->duration_s) < 0 || o->duration_s <= 0)
                return bad(err, errlen, "%s: --duration: '%s' is not a duration (examples: 30, 2.5, 500ms, 5m)",
                           name, optarg);
            break;
        case OPT_RATE:
            if (cli_parse_size(optarg, &o->rate) < 0 || !hi_rate_ok(o->rate))
                return bad(err, errlen, "%s: --rate: '%s' is not a byte count " HI_RATE_RANGE_TEXT
                           " (examples: 4096, 64K, 1M)",
                           name, optarg);
            o->have_rate = true;
            break;
        case OPT_LEAKS: o->leaks = true; break;
        case OPT_FORMAT: {
            char names[256];
            if (!cli_report_find(optarg))
                return bad(err, errlen, "%s: --format: unknown format '%s' (known: %s)", name, optarg,
                           cli_report_names(names, sizeof(names)));
            o->format = optarg;
            break;
        }
        case 'o': o->output = optarg; break;
        case OPT_MODE: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 8);
            if (errno || end == optarg || *end || v < 0 || v > 0777)
                return bad(err, errlen, "%s: --mode: '%s' is not an octal file mode between 0 and 0777 "
                                        "(examples: 0600, 0644)", name, optarg);
            o->mode = (mode_t)v;
            break;
        }
        case OPT_VIA:
            if (!strcmp(optarg, "ptrace"))
                o->via = INJ_VIA_PTRACE;
            else if (!strcmp(optarg, "gdb"))
                o->via = INJ_VIA_GDB;
            else
                return bad(err, errlen, "%s: --via: '%s' is neither ptrace nor gdb", name, optarg);
            break;
        case OPT_TTL: {
            double t;
            if (cli_parse_duration(optarg, &t) < 0 || t > 4294967295.0)
                return bad(err, errlen, "%s: --ttl: '%s' is not a duration (examples: 600, 10m, 0 = never)",
                           name, optarg);
            o->ttl_s = (uint64_t)(t + 0.999); /* never round a safety net down to "forever" */
            o->have_ttl = true;
            break;
        }
        case OPT_DUMP_EVERY:
            if (cli_parse_size(optarg, &o->dump_every) < 0 || o->dump_every == 0)
                return bad(err, errlen, "%s: --dump-every: '%s' is not a byte count (examples: 100M, 1G)", name,
                           optarg);
            break;
        case OPT_DUMP_ON_PEAK: o->dump_on_peak = true; break;
        case OPT_TOP: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 100000)
                return bad(err, errlen, "%s: --top: '%s' is not a number between 1 and 100000", name, optarg);
            o->top = (unsigned)v;
            break;
        }
        case OPT_BY:
            if (cli_view_parse(optarg, &o->by) < 0)
                return bad(err, errlen, "%s: --by: '%s' is not one of stack, function, module, thread", name,
                           optarg);
            break;
        case OPT_INTERVAL:
            if (cli_parse_duration(optarg, &o->interval_s) < 0 || o->interval_s <= 0 || o->interval_s > 60)
                return bad(err, errlen, "%s: --interval: '%s' is not a duration up to 60 s", name, optarg);
            break;
        case OPT_VALUE: {
            enum cli_value v;
            if (cli_value_parse(optarg, &v) < 0)
                return bad(err, errlen,
                           "%s: --value: '%s' is not one of live_bytes, alloc_bytes, live_objects, alloc_objects",
                           name, optarg);
            o->value = optarg;
            break;
        }
        case OPT_NO_SYMBOLS: o->no_symbols = true; break;
        case OPT_CENSUS: o->census = true; break;
        case OPT_NO_CRASH_SNAPSHOT: o->no_crash_snapshot = true; break;
        case OPT_NO_PRESSURE_SNAPSHOT: o->no_pressure_snapshot = true; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_FOLLOW_FORKS: o->follow_forks = true; break;
        case OPT_LAZY_CHILDREN: o->lazy_children = true; break;
        case OPT_PYMALLOC: o->pymalloc = true; break;
        case 'v': o->verbose = true; break;
        case 'q': o->quiet = true; break;
        case 'h':
        case OPT_HELP:
            cli_options_help(cmd, stdout);
            o->help = true;
            return 0;
        default:
            return bad(err, errlen, "%s: unexpected option", name);
        }
    }
    int want = cmd == CLI_CMD_REPORT ? 1 : cmd == CLI_CMD_DIFF ? 2 : 0;
    o->files = argv + optind; /* report: every FILE (merged: issue 28) */
    while (optind < argc && (o->nfiles < want || cmd == CLI_CMD_REPORT))
        o->nfiles++, optind++;
    if (optind < argc)
        return bad(err, errlen, "%s: unexpected argument '%s'", name, argv[optind]);
    if (o->nfiles < want)
        return bad(err, errlen, "%s: %s", name, want == 1 ? "give the profile FILE to read" : "give BASE and FILE");
    if (want)
        return 0;
    if (o->unit && o->cgroup)
        return bad(err, errlen, "%s: --unit and --cgroup both name a cgroup: give one", name);
    if (o->lazy_children && !o->follow_forks && !o->children)
        return bad(err, errlen, "%s: --lazy-children is how forks are followed: give --children or --follow-forks", name);
    if (!o->pid && !o->cgroup && !o->unit)
        return bad(err, errlen, "%s: -p PID is required (the process id, see 'pidof NAME' or 'ps')", name);
    if (cmd == CLI_CMD_RATE && !o->have_rate)
        return bad(err, errlen, "%s: --rate BYTES is required (the new mean bytes between samples)", name);
    if ((o->dump_every || o->dump_on_peak) && !o->output)
        return bad(err, errlen, "%s: --dump-every and --dump-on-peak write numbered files: give -o FILE", name);
    return 0;
}

int cli_options_parse_or_usage(enum cli_command cmd, int argc, char **argv, struct cli_options *o)
{
    char err[512];
    if (cli_options_parse(cmd, argc, argv, o, err, sizeof(err)) < 0) {
        if (cmd == CLI_CMD_PROFILE) /* the one-shot form: err names the program */
            fprintf(stderr, "%s\nRun 'heapinject --help' for the options.\n", err);
        else
            fprintf(stderr, "heapinject %s\nRun 'heapinject %s --help' for the options.\n", err,
                    cli_command_name(cmd));
        return CLI_EXIT_USAGE;
    }
    if (o->help)
        return -1;
    if (o->unit) { /* looked up once, here: every command then reads its cgroup */
        char path[4096];
        int code = cli_unit_cgroup(o->unit, path, sizeof(path));
        if (code)
            return code;
        if (!(o->cgroup = strdup(path))) /* lives as long as the command */
            return CLI_EXIT_FAILURE;
        if (o->verbose)
            fprintf(stderr, "heapinject: --unit %s: cgroup %s\n", o->unit, o->cgroup);
    }
    return 0;
}
