/* report_many.h - `heapinject report FILE...`: several saved profiles (the
 * processes of a service, or one process over time) written as one report
 * (issue 28; the merge is cli/profile/merge.h). */
#ifndef HI_CLI_CMD_REPORT_MANY_H
#define HI_CLI_CMD_REPORT_MANY_H

#include "cli/profile/profile.h"

/* Loads the profile in path into *p (symbolized when it has no names).
 * Returns CLI_EXIT_OK or the exit code, said on stderr as "CMD: PATH: ...". */
typedef int (*cli_report_loader)(const char *cmd, const char *path, struct cli_profile *p);

/* Loads files[0..n) with load and merges them into *out; n == 1 is the one
 * profile as it is. Returns CLI_EXIT_OK or the exit code of the first file
 * that failed (said on stderr), CLI_EXIT_USAGE for a census among several. */
int cli_report_load_many(const char *cmd, char *const *files, int n, cli_report_loader load, struct cli_profile *out);

#endif /* HI_CLI_CMD_REPORT_MANY_H */
