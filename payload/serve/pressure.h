/* pressure.h - memory pressure on the target, as the agent sees it (issue 16).
 *
 * Two measures, read with a few cheap reads (open, read, close) every
 * PL_PRESSURE_CHECK_MS by the agent thread:
 *   - its memory cgroup: usage against the limit, the nearest limit on the
 *     way up from its own cgroup (cgroup v2 memory.current/memory.max, v1
 *     memory.usage_in_bytes/memory.limit_in_bytes), found once at start
 *     from /proc/self/cgroup and /proc/self/mountinfo;
 *   - the system: MemAvailable against MemTotal (/proc/meminfo).
 * Pressure is usage at PL_PRESSURE_CGROUP_PCT % of the limit or more, not
 * counting the inactive page cache (memory.stat inactive_file: the kernel
 * takes it back before it kills), or MemAvailable under
 * PL_PRESSURE_SYSTEM_PCT % of MemTotal: where the OOM killer is near.
 */
#ifndef HI_PAYLOAD_PRESSURE_H
#define HI_PAYLOAD_PRESSURE_H

#include <stdint.h>

#define PL_PRESSURE_CHECK_MS 100
#define PL_PRESSURE_CGROUP_PCT 90u
#define PL_PRESSURE_SYSTEM_PCT 5u
#define PL_PRESSURE_EVERY_MS 1000   /* at most one snapshot a second while above, */
#define PL_PRESSURE_COST_SHARE 10   /* and at most a tenth of the agent's time */

struct pl_pressure {
    uint32_t kind;      /* enum hi_pressure_kind (common/proto.h) */
    uint64_t usage;     /* bytes: the cgroup's usage, or MemTotal - MemAvailable */
    uint64_t limit;     /* bytes: the cgroup's limit, or MemTotal */
};

/* Finds the memory cgroup's files (agent thread, at its start). Returns
 * the kind found (HI_PRESSURE_CGROUP_V1/_V2), or 0 when the process has
 * no limited memory cgroup that it can read (the system measure stays).
 * forked: the agent of a followed fork child, which fork() put in its
 * parent's cgroup: the parent's findings are kept when they were whole at
 * the fork (no /proc/self/cgroup or mountinfo read; mountinfo is long in
 * a container). */
int pl_pressure_init(int forked);

/* One look: 1 when under pressure (*p says which measure and its
 * figures), 0 when not (*p: the cgroup's figures, or the system's). */
int pl_pressure_check(struct pl_pressure *p);

/* Bytes left below the cgroup's limit (its inactive page cache counted
 * as room: the kernel takes it back first), or UINT64_MAX without a
 * limited cgroup. For the tables' budget (payload/sys/arena.h). */
uint64_t pl_pressure_room(void);

#endif /* HI_PAYLOAD_PRESSURE_H */
