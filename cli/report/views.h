/* views.h - a profile's stacks grouped by function, module or thread (--by).
 *
 * The leak-hunt views of the text and json reports: which function, which
 * library, which thread holds the memory. Flat values count a stack for the
 * group of its innermost frame (the code that called the allocator, since
 * heapinject's own frames are left out); cumulative values count it once
 * for every group that appears anywhere in it. Only the text and json
 * writers use this; the file formats keep their own aggregation.
 */
#ifndef HI_CLI_VIEWS_H
#define HI_CLI_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/profile/profile.h"

enum cli_view {
    CLI_VIEW_STACK = 0,   /* every stack on its own: the default report */
    CLI_VIEW_FUNCTION,
    CLI_VIEW_MODULE,
    CLI_VIEW_THREAD,      /* by cli_stack.first_tid: the thread of the stack's first sample */
    CLI_VIEW_PROCESS,     /* by the stack's process (a profile of several, issue 28) */
};

struct cli_group {
    char *name;           /* function: its name, else "module+0xoffset" or
                             "0xaddress"; module: the mapped file's path, or
                             "(unknown)"; thread: its name, else "tid N" */
    char *module;         /* function: its module, NULL when unknown; module:
                             the path again (NULL for "(unknown)"); thread: NULL */
    int32_t tid;          /* thread view only, else 0 */
    int32_t pid;          /* process view only, else 0 */
    size_t stacks;        /* stacks that count in the cumulative values */
    /* estimated, from the stacks whose innermost frame is in the group */
    double live_bytes, live_objects, alloc_bytes, alloc_objects;
    /* estimated, from the stacks that contain the group anywhere (each once) */
    double cum_live_bytes, cum_live_objects, cum_alloc_bytes, cum_alloc_objects;
};

struct cli_view_result {
    struct cli_group *groups; /* ranked: see cli_view_build */
    size_t n;
    bool by_alloc;        /* nothing was live: ranked by allocated bytes */
    double total_live_bytes, total_alloc_bytes; /* of the stacks looked at */
};

/* "stack", "function", "module", "thread", "process" to v. 0 or -EINVAL. */
int cli_view_parse(const char *name, enum cli_view *v);

/* The name of v as --by takes it. */
const char *cli_view_name(enum cli_view v);

/* Groups p's stacks by v (not CLI_VIEW_STACK); with leaks_only, only the
 * stacks that still hold sampled live blocks. Groups are ranked by flat live
 * bytes, then cumulative live bytes, flat and cumulative allocated bytes,
 * name, module and tid; when no byte is live, allocated bytes come first.
 * Fills *out (free with cli_view_free). 0, -EINVAL for CLI_VIEW_STACK, or
 * -ENOMEM. */
int cli_view_build(const struct cli_profile *p, enum cli_view v, bool leaks_only, struct cli_view_result *out);

void cli_view_free(struct cli_view_result *r);

#endif /* HI_CLI_VIEWS_H */
