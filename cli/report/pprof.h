/* pprof.h - pprof: gzipped profile.proto laid out like Go's heap profiles. */
#ifndef HI_CLI_REPORT_PPROF_H
#define HI_CLI_REPORT_PPROF_H

#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Writes p to out. 0 or -errno (-EIO on a write error). */
int cli_report_pprof(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out);

#endif /* HI_CLI_REPORT_PPROF_H */
