/* json_value.h - reading JSON back with jansson's own values (json_t):
 * the parse with heapinject's rules, and numbers read as the readers need
 * them. The readers walk jansson's tree directly (json_object_get,
 * json_array_foreach, json_string_value...); nothing here copies it.
 *
 * The parsing is jansson's (libjansson-dev): RFC 8259, strict (no trailing
 * text, no control characters in strings, integers beyond 64 bits
 * refused), with line and column in its errors; heapinject adds: a key
 * twice in one object is an error, and nesting is bounded. */
#ifndef HI_CLI_UTIL_JSON_VALUE_H
#define HI_CLI_UTIL_JSON_VALUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest nesting a file may have (the top value is at depth 0). */
#define CLI_JSON_VALUE_MAX_DEPTH 64

/* Parses text into a new tree (*out; json_decref() it). 0; -EBADMSG with a
 * reason ("JSON line 3, column 5: ...") in why; -ENOMEM. *out is NULL on
 * error. */
int cli_json_value_parse(const char *text, size_t len, json_t **out, char *why, size_t whylen);

/* Numbers. false when n is NULL, not a number of that kind or out of
 * range. u64: a non-negative integer, or a whole number written as a real
 * (1e3, 1000.0). i64: an integer only. double: any finite number. */
bool cli_json_value_u64(const json_t *n, uint64_t *out);
bool cli_json_value_i64(const json_t *n, int64_t *out);
bool cli_json_value_double(const json_t *n, double *out);

#endif /* HI_CLI_UTIL_JSON_VALUE_H */
