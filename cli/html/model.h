/* model.h - the HTML page's data: one or two profiles (or a census alone)
 * as a compact JSON document that cli/html/viewer.js (model.js) reads.
 *
 * A page for 100,000 stacks must stay small and parse fast, so nothing is
 * written twice: every string (function, file, module) once in "strings";
 * every function once in "frames" (5 numbers: name, file, line, module as
 * string ids, and the module's kind); the stacks as one call tree (node
 * ids in the order "nodes" adds them, a parent before its children)
 * shared by every stack that starts with the same functions; and each
 * stack as 5 numbers in "stacks": its innermost node, live bytes, live
 * objects, allocated bytes, allocated objects. "nodes" and "stacks" are
 * strings of numbers written 5 bits a character (model.c, put_varint);
 * "nodes" as chains: parent + 1 (0: a root), count, that many frame ids,
 * each node the child of the one before. A diff page has the base
 * profile's stacks in "base", in the same tree. "processes" lists the
 * profile's processes ({"pid", "comm"}); "pids" (and "base_pids"), one per
 * stack, written only when the stacks belong to several processes, says
 * which process a stack belongs to; the viewer offers a process selector
 * when it names more than one. */
#ifndef HI_CLI_HTML_MODEL_H
#define HI_CLI_HTML_MODEL_H

#include <stdio.h>

#include "cli/census/census.h"
#include "cli/report/report.h"

/* Module kinds, as "frames" numbers them (viewer.js colours by them). */
enum cli_html_module_kind {
    CLI_HTML_MOD_PROGRAM, /* the profiled executable */
    CLI_HTML_MOD_LIBRARY, /* any other shared object */
    CLI_HTML_MOD_RUNTIME, /* libc, the loader, C++/gcc runtimes, interpreters' libraries */
    CLI_HTML_MOD_JIT,     /* code in anonymous memory ([jit], [anon]) */
    CLI_HTML_MOD_UNKNOWN, /* no module */
};

/* What a page shows: a profile (cur), the growth from base to cur (both
 * set), or a census alone (census set, cur NULL). */
struct cli_html_input {
    const struct cli_profile *cur, *base;
    const struct cli_census *census;
    const char *note;
    unsigned top; /* census rows (0: 100) */
};

/* Writes the JSON document. 0, -ENOMEM or -EIO. */
int cli_html_model_write(const struct cli_html_input *in, FILE *out);

/* The kind of a module path, given the program's path (may be NULL). */
enum cli_html_module_kind cli_html_module_kind(const char *module, const char *program);

#endif /* HI_CLI_HTML_MODEL_H */
