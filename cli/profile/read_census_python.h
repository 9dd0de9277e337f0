/* read_census_python.h - a census's "python" object read back
 * (cli/profile/read_census_python.c). */
#ifndef HI_CLI_PROFILE_READ_CENSUS_PYTHON_H
#define HI_CLI_PROFILE_READ_CENSUS_PYTHON_H

#include <stddef.h>

#include "cli/census/census.h"
#include "cli/util/json_value.h"

/* py: the census's "python" member (NULL or absent: nothing to read).
 * 0, -EBADMSG with the reason in why, or -ENOMEM. */
int cli_census_python_from_json(const json_t *py, struct cli_census *c,
                                char *why, size_t whylen);

#endif /* HI_CLI_PROFILE_READ_CENSUS_PYTHON_H */
