/* page.h - `--format html`: one self-contained page (cli/html/page.c). */
#ifndef HI_CLI_HTML_PAGE_H
#define HI_CLI_HTML_PAGE_H

#include <stdio.h>

#include "cli/census/census.h"
#include "cli/report/report.h"

/* Writes p as one HTML file: the page's data (cli/html/model.h: strings,
 * frames and the call tree interned once) in a <script
 * type="application/json"> block, every '<' in it written as \u003c so
 * that no name from the target can close the block, and the viewer
 * (cli/html/viewer.js, viewer.css, built into the binary). No network
 * access, no external file. 0, -ENOMEM or -EIO. */
int cli_html_write(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);

/* The same page for `heapinject diff BASE FILE`: both profiles' stacks in
 * one call tree; the viewer shows what grew, what shrank and what is new. */
int cli_html_write_diff(const struct cli_profile *base, const struct cli_profile *cur,
                        const struct cli_report_options *opt, FILE *out);

/* The page of `heapinject census --format html`: the census alone (top:
 * rows of each table, 0 = 100). */
int cli_html_write_census(const struct cli_census *c, unsigned top, FILE *out);

#endif /* HI_CLI_HTML_PAGE_H */
