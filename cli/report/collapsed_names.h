/* collapsed_names.h - a stack as "root;caller;leaf" with names made
 * safe for the folded-stacks format (shared with the SVG flame graph). */
#ifndef HI_CLI_REPORT_COLLAPSED_NAMES_H
#define HI_CLI_REPORT_COLLAPSED_NAMES_H

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Appends a frame's cleaned name to b: ';' becomes ':', control characters
 * become ' ', and a trailing " <digits>" gets its space replaced by '_'.
 * 0 or -ENOMEM. */
int cli_collapsed_add_name(struct cli_buf *b, const char *name);

/* A frame's label in folded stacks and flame graphs: its name, and for a
 * frame of Python code `qualname (file:line)`, file cut to its base name
 * (with its directory for a package's __init__.py or __main__.py). */
const char *cli_collapsed_frame_label(const struct cli_frame *f, char *buf, size_t len);

/* Appends the whole stack, root first, ';'-separated (inlined frames are
 * frames of their own). A stack with no frame at all is "[unknown]".
 * 0 or -ENOMEM. */
int cli_collapsed_stack_line(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                             struct cli_buf *b);

#endif /* HI_CLI_REPORT_COLLAPSED_NAMES_H */
