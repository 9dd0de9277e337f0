/* hindex.h - the cli's one hash table: an open-addressing index from a
 * 64-bit hash to an entry number, for tables whose entries live in the
 * caller's own arrays (interned strings, groups of a view, symbolized
 * addresses, DWARF units, pprof ids).
 *
 * A table keyed by a 64-bit value (an address, an id) uses the value
 * itself as the hash and needs no comparison: equal hashes are equal keys.
 * A table keyed by strings passes their hash and a function that compares
 * the key with an entry, so two keys whose hashes collide stay two
 * entries. Linear probing, at most half full, power-of-two sizes; the
 * hashes are kept, so growing never calls back into the caller. */
#ifndef HI_CLI_HINDEX_H
#define HI_CLI_HINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_hindex {
    uint64_t *hash;
    uint32_t *entry1;  /* entry number + 1; 0 = empty slot */
    size_t nslots, n;
};

/* Whether entry `entry` of the caller's table has the key ctx describes. */
typedef bool (*cli_hindex_same)(size_t entry, const void *ctx);

/* The entry stored under hash for which same() holds (any entry with that
 * hash when same is NULL), or -1. */
long cli_hindex_find(const struct cli_hindex *ix, uint64_t hash, cli_hindex_same same, const void *ctx);

/* Records entry under hash (the caller checked it is not there). 0, or
 * -ENOMEM (the index is unchanged). */
int cli_hindex_add(struct cli_hindex *ix, uint64_t hash, size_t entry);

void cli_hindex_free(struct cli_hindex *ix);

/* FNV-1a with a final mix: string keys' hashes. */
uint64_t cli_hindex_hash_bytes(const void *data, size_t len, uint64_t seed);

#endif /* HI_CLI_HINDEX_H */
