/* merge.h - one profile of several processes (issue 28: a service is a
 * postmaster and its backends, an nginx master and its workers).
 *
 * `heapinject report A B ...` reads one profile per process (or several of
 * one process) and writes them as one: every stack keeps the pid of its
 * process, the profile lists its processes (struct cli_process), and the
 * duration is the span from the first attach to the last snapshot, not
 * the sum of the sessions' durations.
 */
#ifndef HI_CLI_PROFILE_MERGE_H
#define HI_CLI_PROFILE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/profile/profile.h"

/* Merges in[0..n) into *out (overwritten; free with cli_profile_free()).
 * The inputs are emptied and freed (their stacks' program counters move
 * to out, their frames' strings are copied into out's string pool).
 *
 * Two profiles of the same session of one process (same pid and attach
 * time) count once: the later snapshot holds the earlier one, so only it
 * is kept; each such drop is said on warn (may be NULL) as
 * "heapinject report: NAME: ..." with names[i] (may be NULL).
 * Stacks are summed per process, never across processes; totals, RSS,
 * histogram and mmap counts are summed; ticks are kept only when one
 * profile is left (they are a session's own timeline). maps is kept when
 * every profile has the same maps text (the forked workers of one master),
 * else it is NULL and maps_differ is set. A census cannot be merged:
 * -EINVAL then (a census file's name is said on warn). 0 or -ENOMEM. */
int cli_profile_merge(struct cli_profile *in, size_t n, const char *const *names, FILE *warn,
                      struct cli_profile *out);

/* The processes of p: p->processes, or, for a profile of one process that
 * lists none (written before issue 28, or heap text), one entry filled
 * from the profile itself into *one (strings NULL). Sets *n. */
const struct cli_process *cli_profile_process_list(const struct cli_profile *p, size_t *n, struct cli_process *one);

/* The process of pid in p's list, or NULL. */
const struct cli_process *cli_profile_process_find(const struct cli_profile *p, int32_t pid);

/* The pid of stack s of p (its own, else the profile's). */
static inline int32_t cli_stack_pid(const struct cli_profile *p, const struct cli_stack *s)
{
    return s->pid ? s->pid : p->pid;
}

/* Makes p's process list one entry for p itself, with what the caller
 * knows of the live process: comm, exe (may be NULL), ppid (0 unknown) and
 * how long the attach took (attach_ms < 0 unknown). 0 or -ENOMEM. */
int cli_profile_set_self(struct cli_profile *p, const char *comm, const char *exe, int32_t ppid, double attach_ms);

/* Copies src's process list (strings too) into dst's, which has none.
 * 0 or -ENOMEM. */
int cli_profile_copy_processes(struct cli_profile *dst, const struct cli_profile *src);

#endif /* HI_CLI_PROFILE_MERGE_H */
