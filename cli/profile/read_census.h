/* read_census.h - a census read back from its JSON, for `heapinject
 * report` (cli/profile/read_census.c). */
#ifndef HI_CLI_PROFILE_READ_CENSUS_H
#define HI_CLI_PROFILE_READ_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/census/census.h"
#include "cli/util/json_value.h"

/* The "census" object `body` (docs/JSON.md "Census") of the process pid
 * into a new census (*out; free it with cli_census_free() and free()).
 * 0, -EBADMSG with the reason in why, or -ENOMEM. */
int cli_census_from_json(const json_t *body, int32_t pid,
                         struct cli_census **out, char *why, size_t whylen);

#endif /* HI_CLI_PROFILE_READ_CENSUS_H */
