/* strtab.h - interned strings and uint64 maps on the cli's one hash table
 * (hindex.h). */
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

/* uint64 -> uint64 map (keys != 0 not required; values any). */
struct cli_u64map {
    uint64_t *vals;          /* by entry */
    size_t n, cap;
    struct cli_hindex index; /* key -> entry */
};
/* 0 if found (*val set), -ENOENT if not. */
int cli_u64map_get(const struct cli_u64map *m, uint64_t key, uint64_t *val);
int cli_u64map_put(struct cli_u64map *m, uint64_t key, uint64_t val); /* 0 or -ENOMEM */
void cli_u64map_free(struct cli_u64map *m);

#endif /* HI_CLI_UTIL_STRTAB_H */
