/* many.h - attach, snapshot and detach of several processes
 * (-p PID,PID,... and --children; issue 28). Each works on the session's
 * targets a few at a time (cli/session/session.h), says per process what
 * it did or why it could not, and goes on with the others. */
#ifndef HI_CLI_CMD_MANY_H
#define HI_CLI_CMD_MANY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli/cmd/options.h"

/* o names several processes (more than one -p pid, or --children). */
static inline bool cli_many_selected(const struct cli_options *o)
{
    return o->npids > 1 || o->children || o->cgroup || o->unit;
}

/* `heapinject attach`: a profiler in each, left running. Exit code: 0
 * when every pid given with -p was attached, else the first failure's. */
int cli_many_attach(const struct cli_options *o);

/* `heapinject snapshot`: one request fanned out to every attached
 * profiler, one merged report (cli/session/gather.h). */
int cli_many_snapshot(const struct cli_options *o);

/* `heapinject detach`: every attached profiler leaves, slots read back. */
int cli_many_detach(const struct cli_options *o);

/* The failures of a command run on several processes one after the other
 * (census, trim): the first among the pids given with -p, and the first of
 * any, from which each command makes its exit code. */
struct cli_many_failures {
    int first_given, first; /* CLI_EXIT_OK until one fails */
};

/* pid's command failed with code (not CLI_EXIT_OK): noted in f. */
void cli_many_note_failure(struct cli_many_failures *f, const struct cli_options *o, pid_t pid, int code);

/* When pid has a profiler: its descendants that have one too (children
 * its followed forks gave a profiler: `attach --children` or
 * --follow-forks), at most cap, into out. Their count. */
size_t cli_many_followed(pid_t pid, pid_t *out, size_t cap);

#endif /* HI_CLI_CMD_MANY_H */
