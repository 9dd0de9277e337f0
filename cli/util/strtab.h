/* strtab.h - a string table for a writer (pprof's string_table, the SVG's
 * names, diff's keys): the index of a string, adding it on first sight.
 * The strings and their dense ids are the cli's one interner's
 * (util/intern.h): a table is a pool of its own plus the array of its
 * strings by index, which the writers hand on as it is. */
#ifndef HI_CLI_UTIL_STRTAB_H
#define HI_CLI_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct cli_intern;

/* Zero-initialized is an empty table. index 0 is the first string added. */
struct cli_strtab {
    char **strs;             /* by index: the pool's strings (never written through) */
    size_t n, cap;
    struct cli_intern *pool; /* owns the strings; NULL until the first one */
};
/* Returns the index (>= 0) or -ENOMEM. s may be NULL: treated as "". */
long cli_strtab_intern(struct cli_strtab *t, const char *s);
long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len);
void cli_strtab_free(struct cli_strtab *t);

#endif /* HI_CLI_UTIL_STRTAB_H */
