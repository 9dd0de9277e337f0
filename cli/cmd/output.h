/* output.h - where reports go: stdout or a file (written whole, then renamed
 * into place), and the numbered files of a --dump-every/--dump-on-peak series. */
#ifndef HI_CLI_OUTPUT_H
#define HI_CLI_OUTPUT_H

#include <stddef.h>
#include <sys/types.h>

#include "cli/cmd/options.h"
#include "cli/profile/profile.h"
#include "cli/report/report.h"

/* Strings the report options point to (kept alive by the caller). */
struct cli_output_ctx {
    char exe[4096];          /* target's executable as it sees it */
    char cmdline[1024];
};

/* Fills ro from the command-line options alone (reports of a file). */
void cli_output_report_options(struct cli_report_options *ro, const struct cli_options *o);

/* Fills ro from the command-line options and what /proc says about pid. */
void cli_output_options(struct cli_report_options *ro, struct cli_output_ctx *ctx, const struct cli_options *o,
                        pid_t pid);

/* Refuses binary formats on a terminal. Returns 0 or -EINVAL (message printed). */
int cli_output_check(const struct cli_report_options *ro, const char *path);

/* Writes p to path (NULL or "-": stdout). A file is written next to its
 * final name and renamed into place, so a reader never sees half a report.
 * Returns 0 or -errno (message printed). */
int cli_output_write(const struct cli_profile *p, const struct cli_report_options *ro, const char *path);

/* The name of file number n of a series: BASE.0001.EXT, where BASE is path
 * without the format's suffix when it ends with it. Returns buf. */
const char *cli_output_series_path(char *buf, size_t len, const char *path, unsigned n, const char *format);

#endif /* HI_CLI_OUTPUT_H */
