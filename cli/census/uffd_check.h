/* uffd_check.h - see uffd_check.c. */
#ifndef HI_CLI_CENSUS_UFFD_CHECK_H
#define HI_CLI_CENSUS_UFFD_CHECK_H

#include <sys/types.h>

/* The number of a descriptor of pid that is a userfaultfd with
 * UFFD_FEATURE_EVENT_FORK, or -1 (none, or /proc cannot tell: the agent
 * checks again from inside). */
int cli_census_uffd_fork_fd(pid_t pid);

#endif /* HI_CLI_CENSUS_UFFD_CHECK_H */
