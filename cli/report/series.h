/* series.h - CSV time series of the session's ticks (see contrib/heapinject-series.gp). */
#ifndef HI_CLI_REPORT_SERIES_H
#define HI_CLI_REPORT_SERIES_H

#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Writes p to out. 0 or -errno (-EIO on a write error). */
int cli_report_series(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out);

#endif /* HI_CLI_REPORT_SERIES_H */
