/* strtab.h - interned strings on the cli's one hash table (hindex.h). */
#ifndef HI_CLI_UTIL_STRTAB_H
#define HI_CLI_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "cli/util/hindex.h"

/* String interning: index of a string in an append-only table, adding it on
 * first sight. Copies the strings. index 0 is the first string added. */
struct cli_strtab {
    char **strs;
    size_t n, cap;
    struct cli_hindex index; /* hash of a string -> its index in strs */
};
/* Returns the index (>= 0) or -ENOMEM. s may be NULL: treated as "". */
long cli_strtab_intern(struct cli_strtab *t, const char *s);
long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len);
void cli_strtab_free(struct cli_strtab *t);

#endif /* HI_CLI_UTIL_STRTAB_H */
