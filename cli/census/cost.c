/* cost.c - what the census's copy costs the process: the worst case
 * checked before the fork against the memory left (system and cgroup),
 * the minor faults the process took while the copy lived measured after.
 * See cost.h. */
#include "cli/census/cost.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/census/cost_history.h"
#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"
#include "cli/process/proc.h"

#define PAGE_BYTES 4096u
#define RATE_WINDOW_MS 200
/* The copy's own fixed needs beside its tables: its stack, the walker's
 * buffers, the kernel's task structures. */
#define COPY_FIXED_BYTES (8u << 20)

static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = read(fd, buf, len - 1);
    int err = errno;
    close(fd);
    if (r < 0)
        return -err;
    buf[r] = '\0';
    return (int)r;
}

/* The files of a memory cgroup: v2's, or v1's memory controller (a
 * hybrid system: limit_in_bytes, no memory.high, oom_control). */
struct cg_files {
    const char *root, *max, *cur, *high, *oom_group;
};
static const struct cg_files CG_V2 = { "/sys/fs/cgroup", "memory.max", "memory.current", "memory.high",
                                       "memory.oom.group" };
static const struct cg_files CG_V1 = { "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes",
                                       NULL, NULL };

/* A memory file of cgroup dir: a number, or UINT64_MAX for "max" (v1
 * says "no limit" with a page-rounded LONG_MAX); false when absent. */
static bool cg_value(const struct cg_files *k, const char *dir, const char *file, uint64_t *v)
{
    char path[512], buf[64];
    if (!file)
        return false;
    snprintf(path, sizeof(path), "%s%s/%s", k->root, dir, file);
    if (read_text(path, buf, sizeof(buf)) <= 0)
        return false;
    *v = !strncmp(buf, "max", 3) ? UINT64_MAX : strtoull(buf, NULL, 10);
    if (*v >= (1ull << 62))
        *v = UINT64_MAX;
    return true;
}

static const struct cg_files *cg_kind(const struct cli_census_cgroup *cg)
{
    return cg->v1 ? &CG_V1 : &CG_V2;
}

int cli_census_cgroup_of(pid_t pid, struct cli_census_cgroup *cg)
{
    char path[64], buf[4096];
    memset(cg, 0, sizeof(*cg));
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    if (read_text(path, buf, sizeof(buf)) <= 0)
        return -ENOENT;
    /* v1's memory line wins when there is one: then v2 has no memory
     * controller. */
    char v2[256] = "", v1[256] = "";
    bool have_v1 = false, have_v2 = false;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *rest = strchr(line, ':');
        if (!rest)
            continue;
        if (!strncmp(line, "0::", 3)) {
            snprintf(v2, sizeof(v2), "%s", !strcmp(line + 3, "/") ? "" : line + 3);
            have_v2 = true;
        } else if (!strncmp(rest, ":memory:", 8)) {
            snprintf(v1, sizeof(v1), "%s", !strcmp(rest + 8, "/") ? "" : rest + 8);
            have_v1 = true;
        }
    }
    if (!have_v1 && !have_v2)
        return -ENOENT;
    cg->v1 = have_v1;
    snprintf(cg->path, sizeof(cg->path), "%s", have_v1 ? v1 : v2);
    const struct cg_files *k = cg_kind(cg);
    if (!cg_value(k, cg->path, k->cur, &cg->current))
        return -ENOENT; /* the root, or no memory controller: no limit of its own */
    cg->max = cg->high = UINT64_MAX;
    cg_value(k, cg->path, k->max, &cg->max);
    cg_value(k, cg->path, k->high, &cg->high);
    uint64_t og = 0;
    cg->oom_group = cg_value(k, cg->path, k->oom_group, &og) && og == 1;
    cg->have = true;
    return 0;
}

int64_t cli_census_minflt(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_text(path, buf, sizeof(buf)) <= 0)
        return -ENOENT;
    /* After the comm's closing parenthesis: state (3), ppid, pgrp,
     * session, tty_nr, tpgid, flags, minflt (10). */
    char *p = strrchr(buf, ')');
    if (!p)
        return -EINVAL;
    unsigned long long v;
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu", &v) != 1)
        return -EINVAL;
    return (int64_t)v;
}

static uint64_t status_kb(pid_t pid, const char *field)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (read_text(path, buf, sizeof(buf)) <= 0)
        return 0;
    char *p = strstr(buf, field);
    return p ? strtoull(p + strlen(field) + 1, NULL, 10) * 1024 : 0;
}

static uint64_t mem_available(void)
{
    char buf[4096];
    if (read_text("/proc/meminfo", buf, sizeof(buf)) <= 0)
        return 0;
    char *p = strstr(buf, "MemAvailable:");
    return p ? strtoull(p + 13, NULL, 10) * 1024 : 0;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The tightest limit on the way up from the process's cgroup: an
 * ancestor's memory.max counts what all its children hold. Room left
 * below memory.max and memory.high (UINT64_MAX: none), and where. */
static void cgroup_room(const struct cli_census_cgroup *cg, uint64_t *max_left, char *max_at, size_t max_len,
                        uint64_t *high_left, char *high_at, size_t high_len)
{
    const struct cg_files *k = cg_kind(cg);
    char dir[256];
    *max_left = *high_left = UINT64_MAX;
    snprintf(dir, sizeof(dir), "%s", cg->path);
    while (dir[0]) {
        uint64_t max = UINT64_MAX, high = UINT64_MAX, cur = 0;
        if (cg_value(k, dir, k->cur, &cur)) {
            cg_value(k, dir, k->max, &max);
            cg_value(k, dir, k->high, &high);
            uint64_t l = max == UINT64_MAX ? UINT64_MAX : max > cur ? max - cur : 0;
            if (l < *max_left) {
                *max_left = l;
                snprintf(max_at, max_len, "%s", dir);
            }
            l = high == UINT64_MAX ? UINT64_MAX : high > cur ? high - cur : 0;
            if (l < *high_left) {
                *high_left = l;
                snprintf(high_at, high_len, "%s", dir);
            }
        }
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
}

/* The last census's copy cost, scaled by how the private memory grew or
 * shrank since (the copy lives as long as the scan of it takes), as a
 * prediction: into cost, and as "; ..." words into say (empty: none). */
static void predict(pid_t pid, uint64_t uss, uint64_t need, struct cli_census_cost *cost, char *say, size_t len)
{
    struct cli_census_history h;
    char a[32], b[32];
    if (cli_census_history_load(pid, &h) < 0) {
        snprintf(say, len, "; no census of this process before, nothing to predict its copy's cost from");
        return;
    }
    double p = (double)h.copied * (double)uss / (double)h.uss;
    cost->predicted = p < (double)need ? (uint64_t)p : need;
    cost->have_predicted = true;
    snprintf(say, len, "; the last census's copy cost about %s in %.1f s (%.0f s ago): about %s for this one",
             cli_fmt_bytes((double)h.copied, a, sizeof(a)), h.window_ms / 1000.0, h.age_s,
             cli_fmt_bytes((double)cost->predicted, b, sizeof(b)));
}

void cli_census_cost_keep(pid_t pid, const struct cli_census_cost *cost)
{
    if (cost->have && cost->uss_before)
        cli_census_history_save(pid, cost->copied_est, cost->window_ms, cost->uss_before);
}

int cli_census_check_cost(pid_t pid, bool force, bool quiet, struct cli_census_cost *cost)
{
    struct cli_proc_mem m;
    struct cli_census_cgroup cg;
    char a[32], b[32], c[32], d[32], max_at[256] = "", high_at[256] = "";

    memset(cost, 0, sizeof(*cost));
    int64_t f0 = cli_census_minflt(pid);
    double t0 = mono_ms();
    if (cli_proc_mem(pid, &m) < 0 || !m.have_pss)
        return CLI_EXIT_OK; /* not knowable: the OOM killer picks the child first */
    /* Worst case: every private page rewritten while the copy lives, the
     * copy's tables (16 bytes a block, at most USS / 2 for 32-byte chunks,
     * typically a few %: USS / 8 reserved), its page tables (the fork
     * copies the process's) and its fixed needs. */
    uint64_t need = m.uss + m.uss / 8 + status_kb(pid, "VmPTE:") + COPY_FIXED_BYTES;
    cost->uss_before = m.uss;
    char predicted[256] = "";
    predict(pid, m.uss, need, cost, predicted, sizeof(predicted));
    uint64_t avail = mem_available(), max_left = UINT64_MAX, high_left = UINT64_MAX;
    bool have_cg = cli_census_cgroup_of(pid, &cg) == 0;
    if (have_cg)
        cgroup_room(&cg, &max_left, max_at, sizeof(max_at), &high_left, high_at, sizeof(high_at));
    const char *risk = NULL;
    char figures[768] = "";
    if (max_left != UINT64_MAX && need > max_left) {
        uint64_t max = 0, cur = 0;
        cg_value(cg_kind(&cg), max_at, cg_kind(&cg)->max, &max);
        cg_value(cg_kind(&cg), max_at, cg_kind(&cg)->cur, &cur);
        snprintf(figures, sizeof(figures), "%scgroup %s: %s %s, %s %s, %s left%s", cg.v1 ? "memory " : "", max_at,
                 cg_kind(&cg)->max, cli_fmt_bytes((double)max, a, sizeof(a)), cg_kind(&cg)->cur,
                 cli_fmt_bytes((double)cur, b, sizeof(b)), cli_fmt_bytes((double)max_left, c, sizeof(c)),
                 cg.oom_group ? "; memory.oom.group is 1: one OOM kill there ends every process of the group, "
                                "this one included"
                              : "");
        risk = "an OOM kill inside the process's memory cgroup";
    } else if (high_left != UINT64_MAX && need > high_left) {
        uint64_t high = 0, cur = 0;
        cg_value(&CG_V2, high_at, "memory.high", &high);
        cg_value(&CG_V2, high_at, "memory.current", &cur);
        snprintf(figures, sizeof(figures), "cgroup %s: memory.high %s, memory.current %s, %s left", high_at,
                 cli_fmt_bytes((double)high, a, sizeof(a)), cli_fmt_bytes((double)cur, b, sizeof(b)),
                 cli_fmt_bytes((double)high_left, c, sizeof(c)));
        risk = "the process's cgroup going over memory.high (its threads throttled in reclaim)";
    } else if (avail && need > avail) {
        snprintf(figures, sizeof(figures), "MemAvailable %s", cli_fmt_bytes((double)avail, a, sizeof(a)));
        risk = "running the system out of memory";
    }
    if (risk) {
        fprintf(stderr,
                "heapinject: census: pid %d has %s of private memory; the copy a census takes could need up to "
                "%s (were all of it rewritten while the copy lives, with the copy's own tables): %s; %s%s. %s\n",
                (int)pid, cli_fmt_bytes((double)m.uss, a, sizeof(a)), cli_fmt_bytes((double)need, d, sizeof(d)),
                figures, risk, predicted,
                force ? "--force: taking it anyway"
                      : "No census was taken, nothing was attached (--force takes it anyway)");
        if (!force)
            return CLI_EXIT_UNSUPPORTED;
    } else if (!quiet) {
        fprintf(stderr, "heapinject: census of pid %d: %s private, at worst %s for the copy; %s available",
                (int)pid, cli_fmt_bytes((double)m.uss, a, sizeof(a)), cli_fmt_bytes((double)need, b, sizeof(b)),
                cli_fmt_bytes((double)avail, c, sizeof(c)));
        if (max_left != UINT64_MAX)
            fprintf(stderr, ", %s below %s of cgroup %s", cli_fmt_bytes((double)max_left, d, sizeof(d)),
                    cg_kind(&cg)->max, max_at);
        fprintf(stderr, "%s\n", predicted);
    }
    /* The usual rate: the faults the program takes anyway (first touches
     * of new memory, mostly), so that the copy's share can be told apart.
     * Only read, never changed: see DESIGN-NOTES, "The copy's cost". */
    double left = RATE_WINDOW_MS - (mono_ms() - t0);
    if (left > 0)
        usleep((useconds_t)(left * 1000));
    int64_t f1 = cli_census_minflt(pid);
    double t1 = mono_ms();
    if (f0 >= 0 && f1 >= f0 && t1 > t0)
        cost->usual_per_s = (double)(f1 - f0) * 1000.0 / (t1 - t0);
    return CLI_EXIT_OK;
}

void cli_census_cost_start(pid_t pid, struct cli_census_cost *cost, double now_ms)
{
    cost->faults_at_start = cli_census_minflt(pid);
    cost->window_ms = now_ms;
}

void cli_census_cost_end(pid_t pid, struct cli_census_cost *cost, double now_ms)
{
    int64_t f = cli_census_minflt(pid);
    if (cost->faults_at_start < 0 || f < cost->faults_at_start)
        return;
    cost->have = true;
    cost->faults = (uint64_t)(f - cost->faults_at_start);
    cost->window_ms = now_ms - cost->window_ms;
    double usual = cost->usual_per_s * cost->window_ms / 1000.0;
    cost->copied_est = (double)cost->faults > usual ? (uint64_t)((double)cost->faults - usual) * PAGE_BYTES : 0;
}
