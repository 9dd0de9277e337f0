/* read_processes.h - a JSON profile's "processes" read back (issue 28). */
#ifndef HI_CLI_PROFILE_READ_PROCESSES_H
#define HI_CLI_PROFILE_READ_PROCESSES_H

#include <stddef.h>

#include "cli/profile/profile.h"
#include <jansson.h>

/* Fills p->processes from the array a (absent or null: none). 0,
 * -EBADMSG with the reason in why, or -ENOMEM (p's list is freed with
 * p in every case). */
int cli_profile_read_processes(const json_t *a, struct cli_profile *p, char *why, size_t whylen);

#endif /* HI_CLI_PROFILE_READ_PROCESSES_H */
