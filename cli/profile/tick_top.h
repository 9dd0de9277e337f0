/* tick_top.h - the stacks that rose most at each tick (hi_tick_top), found
 * in the profile's stacks by their process and bucket. */
#ifndef HI_CLI_TICK_TOP_H
#define HI_CLI_TICK_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/profile/profile.h"

/* Whether any tick names its top risers (a profile from an agent that
 * sends them, or a JSON profile that kept them). */
bool cli_ticks_have_top(const struct cli_profile *p);

/* The profile's stacks by (pid, bucket): a bucket index is one agent's,
 * so two processes of a profile may both have a bucket 3 holding
 * unrelated stacks. */
struct cli_tick_top_index {
    size_t n;
    struct cli_tick_top_key *keys; /* sorted by pid, bucket, stack */
    int32_t self;                  /* the profile's pid: what pid 0 means */
};

/* Builds the index of p's stacks. 0 or -ENOMEM. */
int cli_tick_top_index_init(struct cli_tick_top_index *ix, const struct cli_profile *p);
void cli_tick_top_index_free(struct cli_tick_top_index *ix);

/* The stack (index into p->stacks) that tick t's top entry k names: the
 * first stack of t's process with that bucket; -1 if none. */
int64_t cli_tick_top_stack(const struct cli_tick_top_index *ix, const struct cli_tick *t, unsigned k);

/* The stack that tick t's kept entry k names (as above); -1 if none. */
int64_t cli_tick_kept_stack(const struct cli_tick_top_index *ix, const struct cli_tick *t, unsigned k);

#endif
