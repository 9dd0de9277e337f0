/* intern.h - a pool of interned strings shared by symbolized frames.
 *
 * A snapshot of 100,000 stacks has about 4 million frames but only a few
 * thousand distinct function, file and module names: each distinct string
 * is stored once here, and frames point into the pool (issue 17: three
 * strdup per frame made the cli's time and memory). Every string gets a
 * dense id (0, 1, 2, ... in the order interned), kept just before its
 * bytes, so a writer can build its own string table from ids without
 * hashing a string again.
 *
 * The pool is reference counted: the symbolizer holds one reference while
 * its cache points into it, and each profile whose frames point into it
 * holds one (cli_profile.strings), so either can be freed first. Strings
 * are immutable and live until the last reference goes. Not thread-safe.
 */
#ifndef HI_CLI_UTIL_INTERN_H
#define HI_CLI_UTIL_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct cli_intern;

/* An empty pool with one reference. NULL (errno ENOMEM) on failure. */
struct cli_intern *cli_intern_new(void);

/* The pool's copy of s (len bytes, no NUL needed; a NUL inside is kept as
 * part of the string's bytes but ends it for C readers). The same bytes
 * always give the same pointer. NULL with errno ENOMEM on failure, or
 * EOVERFLOW past 2^32 - 1 strings. */
const char *cli_intern_strn(struct cli_intern *t, const char *s, size_t len);

/* cli_intern_strn of a NUL-terminated string; NULL for NULL (errno 0). */
const char *cli_intern_str(struct cli_intern *t, const char *s);

/* The id of a string returned by this pool (never of any other pointer). */
static inline uint32_t cli_intern_id(const char *interned)
{
    uint32_t id;
    __builtin_memcpy(&id, interned - sizeof(id), sizeof(id));
    return id;
}

/* Distinct strings interned so far (ids are below this). */
size_t cli_intern_count(const struct cli_intern *t);

/* Takes one more reference; returns t (NULL stays NULL). */
struct cli_intern *cli_intern_ref(struct cli_intern *t);

/* Drops one reference; the last one frees the pool and its strings. */
void cli_intern_unref(struct cli_intern *t);

#endif /* HI_CLI_UTIL_INTERN_H */
