/* diff.h - what grew between two profiles (`heapinject diff BASE FILE`). */
#ifndef HI_CLI_PROFILE_DIFF_H
#define HI_CLI_PROFILE_DIFF_H

#include "cli/profile/profile.h"

/* Writes into *out (overwritten; free with cli_profile_free()) the profile
 * of cur minus base: stacks are matched by their frames (function and
 * module file name of each frame, or module and offset where a frame has no
 * function) when both profiles are symbolized, else by their addresses.
 * Stacks with the same key are summed on each side first. A stack is kept
 * when its live or allocated bytes grew; each of its values is cur - base,
 * and values that shrank are 0 (a diff shows growth, never negative bytes).
 * Totals and the size histogram are cur - base, floored at 0. Times stay
 * "since attach" of cur (duration_s, rss, maps, pid, rate are cur's); ticks
 * are cur's, only those after base's snapshot when both come from the same
 * session (same pid and attach time). Threads are left out. Stacks come out
 * sorted (cli_profile_sort). 0 or -ENOMEM. */
int cli_profile_diff(const struct cli_profile *base, const struct cli_profile *cur,
                     struct cli_profile *out);

#endif /* HI_CLI_PROFILE_DIFF_H */
