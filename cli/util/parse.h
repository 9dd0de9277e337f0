/* parse.h - byte counts and durations as the user writes them (--rate 64K,
 * --duration 1m30s... see each). */
#ifndef HI_CLI_UTIL_PARSE_H
#define HI_CLI_UTIL_PARSE_H

#include <stdint.h>

/* Parses a byte count: digits with an optional K, M, G or T suffix (powers
 * of 1024, "KiB"/"KB"/"k" accepted). 0 or -EINVAL (also on overflow). */
int cli_parse_size(const char *s, uint64_t *out);

/* Parses a duration: a number with an optional ms, s, m or h suffix
 * (default seconds). 0 or -EINVAL. */
int cli_parse_duration(const char *s, double *out);

#endif /* HI_CLI_UTIL_PARSE_H */
