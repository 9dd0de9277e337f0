/* svg.h - a self-contained interactive SVG flame graph. */
#ifndef HI_CLI_REPORT_SVG_H
#define HI_CLI_REPORT_SVG_H

#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Writes p to out. 0 or -errno (-EIO on a write error). */
int cli_report_svg(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out);

#endif /* HI_CLI_REPORT_SVG_H */
