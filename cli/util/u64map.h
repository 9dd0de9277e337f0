/* u64map.h - a uint64 -> uint64 map on the cli's one hash table (hindex.h). */
#ifndef HI_CLI_UTIL_U64MAP_H
#define HI_CLI_UTIL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "cli/util/hindex.h"

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

#endif /* HI_CLI_UTIL_U64MAP_H */
