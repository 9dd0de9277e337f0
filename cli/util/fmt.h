/* fmt.h - human-readable numbers and durations for messages and text reports. */
#ifndef HI_CLI_FMT_H
#define HI_CLI_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "512 B", "1.5 KiB", "12.3 MiB". Returns buf. */
const char *cli_fmt_bytes(double bytes, char *buf, size_t len);

/* "999", "1.2k", "3.4M". Returns buf. */
const char *cli_fmt_count(double n, char *buf, size_t len);

/* "0.5 s", "12 s", "3 min 5 s", "2 h 1 min". Returns buf. */
const char *cli_fmt_duration(double seconds, char *buf, size_t len);

/* `one` for a count that prints as 1 (estimates are fractional: 0.6
 * prints as "1"), else `many`: "1 call", "2 calls", "0 calls". */
const char *cli_fmt_noun(double n, const char *one, const char *many);

/* Copies `in` into buf with every ASCII control character (and DEL) shown
 * as \xNN and a backslash as \\: the string came from the target (a
 * library path, a file or symbol name, a thread name) and must never drive
 * the terminal that reads the report (an escape sequence in a path could
 * retitle the window or hide lines). UTF-8 passes through. Truncates to
 * len - 1. Returns buf. */
const char *cli_fmt_printable(const char *in, char *buf, size_t len);

#endif /* HI_CLI_FMT_H */
