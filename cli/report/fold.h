/* fold.h - which frames of a stack the text report shows under its cap.
 *
 * An allocation made through a container sits under a chain of inlined
 * library frames (std::map::insert -> _Rb_tree::_M_emplace_unique ->
 * _M_create_node -> ... -> __new_allocator::allocate; Rust's
 * Vec::with_capacity -> RawVec -> Global::allocate -> alloc::alloc), often
 * longer than the 8 lines a stack gets in the text report: the program's own
 * function, the one a person can change, fell off the end (issue 16). So a
 * run of library frames that are inlined one into the next is shown as one
 * line, its outermost frame (the library call the program made), with the
 * number of frames folded into it; physical frames are never folded.
 */
#ifndef HI_CLI_REPORT_FOLD_H
#define HI_CLI_REPORT_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/profile/profile.h"

/* Library code: a frame in a system library (/usr/lib, /lib), in a
 * language runtime (libpython, python3.*, libjvm, libruby, libperl,
 * libnode, wherever installed), or whose source is a system header or a
 * toolchain's standard library (/usr/include, gcc's headers, Rust's
 * library/ and /rustc/, cargo's registry, Go's GOROOT). Everything else is
 * the program's own. */
bool cli_fold_is_library(const struct cli_frame *f);

/* One line of a stack as shown: frames[frame], with `folded` library frames
 * inlined inside it (frames[frame - folded .. frame - 1]) not shown. */
struct cli_fold_line {
    uint32_t frame;
    uint32_t folded;
};

/* Fills lines (at most max) with the first lines of s's frames, innermost
 * first. Returns the number of lines written; *rest is set to the number of
 * frames after the last written line (those not shown). */
uint32_t cli_fold_lines(const struct cli_stack *s, struct cli_fold_line *lines, uint32_t max, uint32_t *rest);

#endif /* HI_CLI_REPORT_FOLD_H */
