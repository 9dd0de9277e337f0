/* report.h - a saved profile loaded as `heapinject report` and `heapinject
 * diff` load it (cli/cmd/report.c). */
#ifndef HI_CLI_CMD_REPORT_H
#define HI_CLI_CMD_REPORT_H

#include "cli/profile/profile.h"

/* Reads the profile at path into *p (cli/profile/read.c), names its frames
 * when it has none, and sorts it. CLI_EXIT_OK, or the exit code after the
 * message "cmd: path: ..." on stderr. */
int cli_cmd_report_load(const char *cmd, const char *path, struct cli_profile *p);

#endif /* HI_CLI_CMD_REPORT_H */
