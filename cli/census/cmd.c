/* cmd.c - `heapinject census -p PID`.
 *
 * Connects to an attached agent or attaches for the census (owning the
 * session, detaching after), checks that the copy-on-write fork fits in
 * the memory left, asks for the census and writes it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/census/census.h"
#include "cli/census/freeze.h"
#include "cli/census/precheck.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/output.h"
#include "cli/cmd/options.h"
#include "cli/exitcode.h"
#include "cli/report/fmt.h"
#include "cli/target/attach.h"
#include "cli/target/proc.h"

#define CENSUS_WAIT_MS 130000 /* the agent stops a census at 120 s */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t read_u64_file(const char *path, int *is_max)
{
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return 0;
    buf[r] = '\0';
    if (is_max)
        *is_max = !strncmp(buf, "max", 3);
    return strtoull(buf, NULL, 10);
}

/* Memory a census may take: the kernel's MemAvailable, and under a cgroup
 * v2 limit what is left below memory.max. */
static uint64_t memory_left(pid_t pid, char *where, size_t len)
{
    uint64_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "MemAvailable:", 13))
            avail = strtoull(line + 13, NULL, 10) * 1024;
    if (f)
        fclose(f);
    snprintf(where, len, "MemAvailable");
    char path[512];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    f = fopen(path, "re");
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "0::", 3))
            continue;
        line[strcspn(line, "\n")] = '\0';
        char maxp[512], curp[512];
        snprintf(maxp, sizeof(maxp), "/sys/fs/cgroup%s/memory.max", line + 3);
        snprintf(curp, sizeof(curp), "/sys/fs/cgroup%s/memory.current", line + 3);
        int unlimited = 1;
        uint64_t max = read_u64_file(maxp, &unlimited), cur = read_u64_file(curp, NULL);
        if (!unlimited && max) {
            uint64_t left = max > cur ? max - cur : 0;
            if (left < avail) {
                avail = left;
                snprintf(where, len, "the cgroup's memory.max");
            }
        }
    }
    if (f)
        fclose(f);
    return avail;
}

/* The fork costs one page for each private page the process writes while
 * the copy lives, at most all of them (USS), plus the child's tables (16
 * bytes per block: at most USS / 2 for 32-byte chunks, typically a few %;
 * USS / 8 is reserved). */
static int check_headroom(pid_t pid, bool quiet)
{
    struct cli_proc_mem m;
    char where[64], a[32], b[32];
    if (cli_proc_mem(pid, &m) < 0 || !m.have_pss)
        return CLI_EXIT_OK; /* not knowable: the OOM killer picks the child first */
    uint64_t need = m.uss + m.uss / 8, left = memory_left(pid, where, sizeof(where));
    if (left && need > left) {
        fprintf(stderr, "heapinject: census: pid %d has %s of private memory; the copy a census takes could "
                        "need up to %s if the process rewrote all of it meanwhile, and %s leaves %s: no census "
                        "was taken\n",
                (int)pid, cli_fmt_bytes((double)m.uss, a, sizeof(a)), cli_fmt_bytes((double)need, b, sizeof(b)),
                where, cli_fmt_bytes((double)left, a, sizeof(a)));
        return CLI_EXIT_UNSUPPORTED;
    }
    if (!quiet)
        fprintf(stderr, "heapinject: census of pid %d: %s private, %s free (%s)\n", (int)pid,
                cli_fmt_bytes((double)m.uss, a, sizeof(a)), cli_fmt_bytes((double)left, b, sizeof(b)), where);
    return CLI_EXIT_OK;
}

struct census_doc {
    const struct cli_options *o;
    const struct cli_census *c;
};

static int write_census(FILE *f, void *arg)
{
    const struct census_doc *d = arg;
    bool json = !strcmp(d->o->format, "json");
    unsigned top = d->o->top ? d->o->top : json ? 100 : 10;
    int rc = json ? cli_census_write_json(f, d->c, top) : cli_census_write_text(f, d->c, top);
    return rc < 0 ? -EIO : 0;
}

/* The census once -o is open (before anything is attached). */
static int census(struct cli_options o, struct cli_output *out)
{
    struct cli_client cl;
    struct cli_sock_path sock;
    struct cli_census c;
    int code;

    if (!o.pid) {
        fprintf(stderr, "heapinject census: -p PID is required\n");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(o.format, "text") && strcmp(o.format, "json")) {
        fprintf(stderr, "heapinject census: --format: a census is written as text or json, not %s\n", o.format);
        return CLI_EXIT_USAGE;
    }
    if (!cli_proc_alive(o.pid)) {
        fprintf(stderr, "heapinject: pid %d: no such process.\n", (int)o.pid);
        return CLI_EXIT_NOPROC;
    }
    if ((code = cli_check_is_process(o.pid, false)) != CLI_EXIT_OK ||
        (code = check_headroom(o.pid, o.quiet)) != CLI_EXIT_OK)
        return code;
    memset(&c, 0, sizeof(c));
    cli_proc_comm(o.pid, c.comm, sizeof(c.comm));
    if ((code = cli_census_precheck(o.pid, c.comm)) != CLI_EXIT_OK)
        return code;
    bool ours;
    struct cli_attach_options ao = { .pid = o.pid, .rate = o.rate, .ttl_s = 2, .watch_cli = true, .via = o.via,
                                     .verbose = o.verbose };
    if ((code = cli_attach_for_request(&ao, &cl, &sock, &ours)) != CLI_EXIT_OK)
        return code;
    c.pid = o.pid;
    struct cli_proc_mem m;
    if (cli_proc_mem(o.pid, &m) == 0)
        c.rss_before = m.rss;
    if (!o.quiet)
        fprintf(stderr, "heapinject: census of pid %d (%s): forking a copy and walking its heap...\n", (int)o.pid,
                c.comm);
    double t0 = now_ms();
    int rc = cli_census_take(&cl, &c, CENSUS_WAIT_MS);
    c.wall_ms = now_ms() - t0;
    if (cli_proc_mem(o.pid, &m) == 0)
        c.rss_after = m.rss;
    if (ours) {
        if (cli_client_detach(&cl) < 0 || cli_client_wait_closed(&cl, 5000) < 0)
            fprintf(stderr, "heapinject: pid %d: detach was not confirmed (%s); the agent detaches by itself now "
                            "that heapinject disconnects\n", (int)o.pid, cl.error);
    }
    if (rc < 0) /* before the close, which clears the client's error */
        fprintf(stderr, "heapinject: pid %d: census failed: %s\n", (int)o.pid, cl.error);
    cli_client_close(&cl);
    if (rc < 0) {
        cli_census_free(&c);
        return cli_proc_alive(o.pid) ? CLI_EXIT_FAILURE : CLI_EXIT_NOPROC;
    }
    if (c.end.status < 0) {
        fprintf(stderr, "heapinject: pid %d (%s): no census: %s%s\n", (int)o.pid, c.comm, c.end.why,
                ours ? "; heapinject detached again" : "");
        code = c.end.status == -ENOTSUP || c.end.status == -EPERM ? CLI_EXIT_UNSUPPORTED : CLI_EXIT_FAILURE;
        cli_census_free(&c);
        return code;
    }
    if (ours) /* attached only for the census: no session's history to tell */
        cli_census_drop_since_attach(&c);
    if (cli_census_name(&c) < 0)
        fprintf(stderr, "heapinject: census: some types and roots could not be named (out of memory)\n");
    struct census_doc doc = { &o, &c };
    code = cli_output_commit(out, write_census, &doc) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    if (!o.quiet && ours)
        fprintf(stderr, "heapinject: detached: the copy is gone, the process runs on as before\n");
    cli_census_free(&c);
    return code;
}

int cli_cmd_census(int argc, char **argv)
{
    struct cli_options o;
    struct cli_output out;
    int code;

    if ((code = cli_options_parse_or_usage(CLI_CMD_CENSUS, argc, argv, &o)) != 0)
        return code < 0 ? CLI_EXIT_OK : code;
    if (cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    code = census(o, &out);
    cli_output_close(&out);
    return code;
}
