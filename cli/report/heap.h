/* heap.h - gperftools heap profile text (heap_v2), read by pprof, google-pprof and jeprof. */
#ifndef HI_CLI_REPORT_HEAP_H
#define HI_CLI_REPORT_HEAP_H

#include <stdio.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* Writes p to out. 0 or -errno (-EIO on a write error). */
int cli_report_heap(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out);

#endif /* HI_CLI_REPORT_HEAP_H */
