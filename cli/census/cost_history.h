/* cost_history.h - what the last census's copy of a process cost, kept
 * between censuses so that the next one can be predicted (issue 25,
 * item 4).
 *
 * The fault rate before a fork does not tell what a copy will cost
 * (rewriting memory a process already has costs it no fault while no copy
 * shares it), and soft-dirty bits would change the process. What does
 * tell is the last copy of the same process: the pages it rewrote while
 * that copy lived. One line a process, "<pid>.cost" in a directory of
 * the cli user's own, for that process only (its start time in it: a pid
 * reused by another process reads as no history). */
#ifndef HI_CLI_CENSUS_COST_HISTORY_H
#define HI_CLI_CENSUS_COST_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_census_history {
    uint64_t copied;     /* bytes the last copy cost (faults above the usual rate, a page each) */
    double window_ms;    /* how long that copy lived */
    uint64_t uss;        /* the process's private memory before that census */
    double age_s;        /* how long ago it ended */
};

/* The last census's cost for this very process: 0, or -errno (-ENOENT:
 * none kept). */
int cli_census_history_load(pid_t pid, struct cli_census_history *h);

/* Keeps a census's cost for the next one. Best effort: 0 or -errno. */
int cli_census_history_save(pid_t pid, uint64_t copied, double window_ms, uint64_t uss);

#endif /* HI_CLI_CENSUS_COST_HISTORY_H */
