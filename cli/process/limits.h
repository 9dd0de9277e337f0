/* limits.h - the target's resource limits that would make the attach fail
 * half-way: no free file descriptor (the payload's dlopen and socket), no
 * room under RLIMIT_NPROC (the agent thread, the census's fork). See
 * limits.c. */
#ifndef HI_CLI_PROCESS_LIMITS_H
#define HI_CLI_PROCESS_LIMITS_H

#include <sys/types.h>

/* CLI_EXIT_OK, or CLI_EXIT_BUSY with the reason on stderr when pid has no
 * free descriptor or cannot make `tasks` more tasks under RLIMIT_NPROC.
 * What cannot be read is not refused (the attach says what fails). */
int cli_limits_check(pid_t pid, int tasks);

#endif /* HI_CLI_PROCESS_LIMITS_H */
