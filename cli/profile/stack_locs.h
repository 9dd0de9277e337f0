/* stack_locs.h - a stack as program counters with the frames each expands
 * to, and display names of frames. */
#ifndef HI_CLI_PROFILE_STACK_LOCS_H
#define HI_CLI_PROFILE_STACK_LOCS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/process/maps.h"
#include "cli/profile/profile.h"

/* One program counter of a stack with the frames it expands to. */
struct cli_stack_loc {
    uint64_t addr;                   /* return address as captured */
    const struct cli_frame *frames;  /* innermost first; NULL if unsymbolized */
    uint32_t nframes;
};

/* The stack as a list of locations, innermost first, in a malloc'ed array
 * (*out, *n; free() it). With symbolized frames the locations are the
 * frames grouped by program counter (heapinject's own frames already
 * removed); without, the raw PCs minus those inside heapinject's own payload
 * (a mapping whose file is named libheapinject.so). 0 or -ENOMEM. */
int cli_stack_locs(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                          struct cli_stack_loc **out, size_t *n);

/* A display name for a frame: its function, else "module+0xoffset", else
 * "0xaddr". Returns f->function or buf. */
const char *cli_stack_frame_name(const struct cli_frame *f, char *buf, size_t len);

#endif /* HI_CLI_PROFILE_STACK_LOCS_H */
