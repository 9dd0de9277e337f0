/* output.h - where reports go: stdout or a file, opened before the work
 * starts and put in place whole at the end, and the numbered files of a
 * --dump-every/--dump-on-peak series. */
#ifndef HI_CLI_OUTPUT_H
#define HI_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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

/* A report's destination. A regular file (new, or replaced whole) is
 * written as an unnamed file (O_TMPFILE) in its directory and linked into
 * place when complete, so that whenever the cli is killed nothing is left
 * behind and PATH is never half written. Where the filesystem has no
 * O_TMPFILE, a named FINAL.tmp.PID is used and removed on SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT (not on SIGKILL). A device, fifo or dangling symlink is
 * written through as it is (renaming over /dev/null would replace it), and
 * /dev/stdout, /dev/fd/N are the descriptors themselves. */
struct cli_output {
    char *path;          /* as given; NULL: stdout */
    char *final;         /* the name the file gets: path, or the regular file a symlink names */
    int fd;              /* /dev/stdout, /dev/fd/N...: the caller's descriptor N, else -1 */
    int tmp_fd;          /* unnamed file opened by cli_output_open, -1 once used */
    bool in_place;       /* written through path */
    bool named_tmp;      /* no O_TMPFILE: a named temporary at write time */
    mode_t mode;         /* of a file created here (exact: the umask does not apply) */
};

/* Writes one document to f. Returns 0 or -errno. */
typedef int (*cli_output_writer)(FILE *f, void *arg);

/* Checks now, before any long work, that path (NULL or "-": stdout) can be
 * written: opens the unnamed file in its directory, or checks a device,
 * fifo or dangling symlink for writing. Returns 0, or -errno with a message
 * naming path and the reason (-EISDIR for a directory). */
int cli_output_open(struct cli_output *o, const char *path, mode_t mode);

/* Writes the document and puts it in place. Returns 0, or -errno with a
 * message; the errno is the one the failing write(2) or close(2) got
 * (ENOSPC on a full disk), not a stream's EIO. Once per cli_output_open. */
int cli_output_commit(struct cli_output *o, cli_output_writer write, void *arg);

/* cli_output_commit of a report (cli_report_write). */
int cli_output_commit_report(struct cli_output *o, const struct cli_profile *p,
                             const struct cli_report_options *ro);

/* Releases o; a file not committed leaves nothing behind. */
void cli_output_close(struct cli_output *o);

/* Opens, commits and closes: a report written to path at once. */
int cli_output_write(const struct cli_profile *p, const struct cli_report_options *ro, const char *path,
                     mode_t mode);

/* The name of file number n of a series: BASE.0001.EXT, where BASE is path
 * without the format's suffix when it ends with it. Returns buf. */
const char *cli_output_series_path(char *buf, size_t len, const char *path, unsigned n, const char *format);

#endif /* HI_CLI_OUTPUT_H */
