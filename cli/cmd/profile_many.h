/* profile_many.h - `heapinject -p PID,PID,...` and `heapinject -p PID
 * --children`: the one-shot session of several processes (issue 28). */
#ifndef HI_CLI_CMD_PROFILE_MANY_H
#define HI_CLI_CMD_PROFILE_MANY_H

#include "cli/cmd/options.h"

/* Attaches to every selected process at once, profiles them for the
 * duration (or until Ctrl-C), snapshots them together, detaches from all
 * and writes one merged report. Returns the exit code: 0 when every pid
 * given with -p was profiled (a descendant that could not be is listed
 * with its reason), else the code of the first given pid that failed. */
int cli_profile_many(const struct cli_options *opt);

#endif /* HI_CLI_CMD_PROFILE_MANY_H */
