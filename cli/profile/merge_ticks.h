/* merge_ticks.h - the ticks of several profiles as one timeline. */
#ifndef HI_CLI_MERGE_TICKS_H
#define HI_CLI_MERGE_TICKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/profile/profile.h"

/* The ticks of in[i] (drop[i] false; drop may be NULL) in time order, each
 * tagged with the pid of its process (its own, else its profile's), so
 * that its top risers are looked up among that process's stacks. A tick's
 * t_s is moved onto the clock of attach_ns (the merged profile's first
 * attach; 0: unknown, each keeps its own). Its live, allocated and RSS
 * bytes are the sums, over the profiles, of each one's newest tick so far
 * (a profile whose process exited counts no more after its last tick).
 * *out is malloc'd (NULL when there are none). 0 or -ENOMEM. */
int cli_ticks_merge(const struct cli_profile *in, size_t n, const bool *drop, uint64_t attach_ns,
                    struct cli_tick **out, size_t *nout);

#endif
