/* tick_top.h - the stacks that rose most at each tick (hi_tick_top), found
 * in the profile's stacks by their bucket. */
#ifndef HI_CLI_TICK_TOP_H
#define HI_CLI_TICK_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/profile/profile.h"

/* Whether any tick names its top risers (a profile from an agent that
 * sends them, or a JSON profile that kept them). */
bool cli_ticks_have_top(const struct cli_profile *p);

/* A table from bucket to stack index (-1: no stack), *n entries long;
 * the caller frees it. NULL on out of memory. */
int64_t *cli_tick_top_map(const struct cli_profile *p, size_t *n);

#endif
