/* cost.h - what the census's copy costs the process, before and after.
 *
 * The copy-on-write fork shares every page; each page the process writes
 * while the copy lives is copied first (a minor fault, a new page charged
 * to the process's memory cgroup). Before the fork: whether the worst case
 * (every private page rewritten, plus the copy's own tables and page
 * tables) fits in the memory left, in the system and below the process's
 * cgroup limits. After: the minor faults the process took while the copy
 * lived, against its own rate just before. See docs/DESIGN-NOTES.md,
 * "The copy's cost". */
#ifndef HI_CLI_CENSUS_COST_H
#define HI_CLI_CENSUS_COST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The memory cgroup a process is in, as its files say: v2's, or v1's
 * memory controller on a hybrid system (memory.limit_in_bytes as max). */
struct cli_census_cgroup {
    bool have;               /* found, with its memory.current (v1: usage_in_bytes) */
    bool v1;                 /* under /sys/fs/cgroup/memory */
    char path[256];          /* "/a/b" as in /proc/PID/cgroup's "0::" (or ":memory:") line */
    uint64_t max, high;      /* UINT64_MAX: "max" (no limit) */
    uint64_t current;
    int oom_group;           /* memory.oom.group: 1 kills the whole group */
};

int cli_census_cgroup_of(pid_t pid, struct cli_census_cgroup *cg);

/* Minor faults of the process so far (/proc/PID/stat, field 10, all its
 * threads); -errno when unreadable. */
int64_t cli_census_minflt(pid_t pid);

/* The faults the process took while the copy lived. */
struct cli_census_cost {
    bool have;
    int64_t faults_at_start; /* minflt when the census began (-errno: unreadable) */
    uint64_t faults;         /* minor faults from just before the fork to the end */
    double window_ms;        /* over how long */
    double usual_per_s;      /* its rate over a short window before (first touches, mostly) */
    uint64_t copied_est;     /* bytes: faults above the usual rate, a page each */
    uint64_t uss_before;     /* private memory when checked (0: unknown) */
    bool have_predicted;     /* a census of this process was taken before (cost_history.h) */
    uint64_t predicted;      /* bytes: the last copy's cost, scaled by private memory now over then */
};

/* Before the census: refuses (CLI_EXIT_UNSUPPORTED, figures on stderr)
 * when the worst case does not fit below the cgroup's memory.max or
 * memory.high or in MemAvailable, unless force (then says so and goes
 * on). Measures the usual fault rate into cost (200 ms). CLI_EXIT_OK. */
int cli_census_check_cost(pid_t pid, bool force, bool quiet, struct cli_census_cost *cost);

/* After a census that was taken: keeps its cost for the next one's
 * prediction (cost_history.h). */
void cli_census_cost_keep(pid_t pid, const struct cli_census_cost *cost);

/* Brackets the census: start just before it, end after. */
void cli_census_cost_start(pid_t pid, struct cli_census_cost *cost, double now_ms);
void cli_census_cost_end(pid_t pid, struct cli_census_cost *cost, double now_ms);

#endif /* HI_CLI_CENSUS_COST_H */
