/* unreaped.h - census copies their parent has not reaped.
 *
 * A census's copy is the program's sibling (CLONE_PARENT: the child of
 * the program's parent, payload/census.c), so that the program never sees
 * it among its own children. A parent that reaps only the children it
 * started (Python's subprocess, a supervisor waiting on one pid) keeps
 * each ended copy as a zombie until it exits: no memory, one process slot
 * each. Nobody else can reap a process; the census says so. */
#ifndef HI_CLI_CENSUS_UNREAPED_H
#define HI_CLI_CENSUS_UNREAPED_H

#include <sys/types.h>

/* The ended census copies ("heapinject-cen", state Z) among the children
 * of pid's parent, after waiting up to wait_ms for the parent to reap
 * them. Returns how many; *parent and *one (a zombie's pid) set when any. */
int cli_census_unreaped(pid_t pid, int wait_ms, pid_t *parent, pid_t *one);

#endif /* HI_CLI_CENSUS_UNREAPED_H */
