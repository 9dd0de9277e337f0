/* read.h - load a profile file that heapinject wrote, for
 * `heapinject report FILE` and `heapinject diff BASE FILE`.
 *
 * Three formats carry a whole profile and are read back, recognized by
 * their content, not their name:
 *   JSON  ('{')              everything: stacks with frames, threads, ticks,
 *                            histogram, maps (cli/report/json.c's schema)
 *   pprof (gzip magic)       stacks with frames or addresses, mappings as
 *                            maps text, totals and ticks from our comments
 *   heap  ("heap profile:")  stacks as addresses (no frames: symbolize them
 *                            with cli/symbolize/symbolize.h), raw counts, maps text
 * Collapsed stacks, SVG, massif and CSV are views: they cannot be read back.
 *
 * Nothing in a file can crash the reader: every length, index and id is
 * checked, and the first problem is reported in words.
 */
#ifndef HI_CLI_PROFILE_READ_H
#define HI_CLI_PROFILE_READ_H

#include <stdarg.h>
#include <stddef.h>

#include "cli/profile/profile.h"

/* Files larger than this are refused (and so are pprof files that inflate
 * beyond it): a profile of even a huge process is a few MiB. */
#define CLI_PROFILE_READ_MAX_BYTES (512u << 20)

/* The reason buffer size that always suffices. */
#define CLI_PROFILE_READ_WHY_LEN 256u

enum cli_profile_kind {
    CLI_PROFILE_UNKNOWN,
    CLI_PROFILE_JSON,
    CLI_PROFILE_PPROF,
    CLI_PROFILE_HEAP,
};

/* Reads the profile in `path` into *p (which is overwritten; free it with
 * cli_profile_free()). Returns 0; -EBADMSG when the file is not a profile
 * heapinject can read (corrupt, truncated, foreign, too large), with the
 * reason in why; or -errno when the file cannot be read (why = strerror).
 * On error *p is empty. kind (may be NULL) gets the format found. */
int cli_profile_read(const char *path, struct cli_profile *p, enum cli_profile_kind *kind,
                     char *why, size_t whylen);

/* Same, from memory. */
int cli_profile_read_mem(const void *data, size_t len, struct cli_profile *p,
                         enum cli_profile_kind *kind, char *why, size_t whylen);

/* The format of data by its first bytes. */
enum cli_profile_kind cli_profile_detect(const void *data, size_t len);

/* Prints the error of cli_profile_read() for a command:
 *   "report: FILE: not a heapinject profile (REASON)"   (-EBADMSG)
 *   "report: FILE: No such file or directory"           (other errors)
 * and returns the exit code: CLI_EXIT_BADFILE or CLI_EXIT_FAILURE. */
int cli_profile_read_perror(const char *cmd, const char *path, int err, const char *why);

/* For the readers: the reason into why (when given), and -EBADMSG. */
int cli_profile_read_bad(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cli_profile_read_vbad(char *why, size_t whylen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* The format readers, for data of a known kind (same contract). */
int cli_profile_read_pprof(const void *data, size_t len, struct cli_profile *p, char *why,
                           size_t whylen);
int cli_profile_read_heap(const char *text, size_t len, struct cli_profile *p, char *why,
                          size_t whylen);
int cli_profile_read_json(const char *text, size_t len, struct cli_profile *p, char *why,
                          size_t whylen);

#endif /* HI_CLI_PROFILE_READ_H */
