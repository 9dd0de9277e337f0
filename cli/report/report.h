/* report.h - write a profile in the format the user asked for.
 *
 * One entry point and one table for every writer (report.c): text and
 * json (cli/report/text.c, json.c) take the report's options; the file
 * formats (pprof, heap, collapsed, svg, massif, series: their own files,
 * helpers in formats.h) take only the file-format part of them.
 */
#ifndef HI_CLI_REPORT_H
#define HI_CLI_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"
#include "cli/report/views.h"

#define CLI_REPORT_DEFAULT_TOP 10u


struct cli_children; /* cli/process/children.h */

struct cli_report_options {
    const char *format;   /* a name from cli_report_names(); NULL = "text" */
    bool leaks;           /* only blocks still live, with ages, and the
                             "growing" ranking */
    unsigned top;         /* text: stacks, functions or groups shown; 0 = default */
    enum cli_view by;     /* text and json: CLI_VIEW_STACK (0, the default)
                             or grouped by function, module, thread; the
                             file formats ignore it */
    const char *note;     /* a line the text report prints first (e.g. "the
                             target exited during the session"); may be NULL */
    const struct cli_target_exit *target_exit; /* NULL unless the target exited */
    const struct cli_children *children; /* the live target's child processes; NULL
                             when not looked at (a saved profile) */
    struct cli_format_options fmt; /* handed to the file-format writers */
};

/* A format heapinject can write: one of the two kinds of writer is set. */
struct cli_report_format {
    const char *name;     /* --format NAME */
    const char *suffix;   /* file name ending for numbered series, e.g. ".json" */
    bool binary;          /* not fit for a terminal */
    int (*write_report)(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);
    cli_format_writer write_file; /* gets &opt->fmt */
};

/* Looks up a format by name (NULL = "text"); NULL when unknown. */
const struct cli_report_format *cli_report_find(const char *name);

/* Writes "text, json, pprof, ..." (all known names) into buf. Returns buf. */
const char *cli_report_names(char *buf, size_t len);

/* Writes p in opt->format to out. Returns 0, -EINVAL for an unknown format,
 * -EIO when writing failed, or the writer's -errno. p must be sorted
 * (cli_profile_sort) and symbolized when names are wanted. */
int cli_report_write(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);

/* The built-in writers (cli/report/text.c, cli/report/json.c). */
int cli_report_text(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);
int cli_report_json(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);

/* A JSON string for every JSON writer (report, census, memory): null for
 * NULL; bytes that are not UTF-8 (a path or a thread name can hold any)
 * written as the Latin-1 character of that byte, so the document stays
 * valid and reads back. */
void cli_json_write_str(FILE *out, const char *s);
void cli_json_write_str_len(FILE *out, const char *s, size_t n);

#endif /* HI_CLI_REPORT_H */
