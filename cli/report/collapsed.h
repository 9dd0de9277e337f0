/* collapsed.h - collapsed (folded) stacks for flame graph tools: "root;caller;leaf VALUE". */
#ifndef HI_CLI_REPORT_COLLAPSED_H
#define HI_CLI_REPORT_COLLAPSED_H

#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Writes p to out. 0 or -errno (-EIO on a write error). */
int cli_report_collapsed(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out);

#endif /* HI_CLI_REPORT_COLLAPSED_H */
