/* page.h - `--format html`: one self-contained page (cli/html/page.c). */
#ifndef HI_CLI_HTML_PAGE_H
#define HI_CLI_HTML_PAGE_H

#include <stdio.h>

#include "cli/report/report.h"

/* Writes p as one HTML file: the profile's JSON (docs/JSON.md, with the
 * leak rankings) in a <script type="application/json"> block, every '<' in
 * it written as \u003c so that no name from the target can close the block,
 * and the viewer (cli/html/viewer.js, viewer.css, built into the binary).
 * No network access, no external file. 0, -ENOMEM or -EIO. */
int cli_html_write(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out);

#endif /* HI_CLI_HTML_PAGE_H */
