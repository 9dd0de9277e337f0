/* precheck.h - what makes a census impossible, found from outside before
 * anything is attached.
 *
 * The payload refuses a census it cannot take (payload/census.c: another
 * allocator than glibc's, a seccomp filter that may forbid the fork), but
 * only once it is loaded, and it stays loaded for good. What /proc shows
 * is checked here first, so a census that cannot be taken leaves the
 * process as it was; the payload's own checks stay for what only it sees
 * (its thread's filter, an allocator the GOT did not name). */
#ifndef HI_CLI_CENSUS_PRECHECK_H
#define HI_CLI_CENSUS_PRECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The allocator a module's file name shows ("jemalloc" for
 * .../libjemalloc.so.2), or NULL for glibc's libc and names not known. */
const char *cli_census_allocator_of(const char *path);

/* CLI_EXIT_OK when nothing seen rules out a census of pid (comm: its name,
 * for the message); otherwise says why on stderr and returns
 * CLI_EXIT_UNSUPPORTED. */
int cli_census_precheck(pid_t pid, const char *comm);

#endif /* HI_CLI_CENSUS_PRECHECK_H */
