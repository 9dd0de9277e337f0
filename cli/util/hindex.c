/* hindex.c - the cli's one hash table (see hindex.h). */
#include "cli/util/hindex.h"

#include <errno.h>
#include <stdlib.h>

/* Spreads a hash over the slots: keys that are addresses or small ids
 * differ only in a few bits. */
static size_t slot_of(uint64_t h, size_t nslots)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & (nslots - 1);
}

long cli_hindex_find(const struct cli_hindex *ix, uint64_t hash, cli_hindex_same same, const void *ctx)
{
    if (!ix->nslots)
        return -1;
    for (size_t k = slot_of(hash, ix->nslots); ix->entry1[k]; k = (k + 1) & (ix->nslots - 1))
        if (ix->hash[k] == hash && (!same || same(ix->entry1[k] - 1, ctx)))
            return (long)(ix->entry1[k] - 1);
    return -1;
}

static void put(uint64_t *hash, uint32_t *entry1, size_t nslots, uint64_t h, uint32_t e1)
{
    size_t k = slot_of(h, nslots);
    while (entry1[k])
        k = (k + 1) & (nslots - 1);
    hash[k] = h;
    entry1[k] = e1;
}

int cli_hindex_add(struct cli_hindex *ix, uint64_t hash, size_t entry)
{
    if (entry >= UINT32_MAX)
        return -ENOMEM;
    if ((ix->n + 1) * 2 > ix->nslots) {
        size_t ns = ix->nslots ? ix->nslots * 2 : 256;
        uint64_t *nh = malloc(ns * sizeof(*nh));
        uint32_t *ne = calloc(ns, sizeof(*ne));
        if (!nh || !ne) {
            free(nh);
            free(ne);
            return -ENOMEM;
        }
        for (size_t k = 0; k < ix->nslots; k++)
            if (ix->entry1[k])
                put(nh, ne, ns, ix->hash[k], ix->entry1[k]);
        free(ix->hash);
        free(ix->entry1);
        ix->hash = nh;
        ix->entry1 = ne;
        ix->nslots = ns;
    }
    put(ix->hash, ix->entry1, ix->nslots, hash, (uint32_t)(entry + 1));
    ix->n++;
    return 0;
}

void cli_hindex_free(struct cli_hindex *ix)
{
    free(ix->hash);
    free(ix->entry1);
    ix->hash = NULL;
    ix->entry1 = NULL;
    ix->nslots = ix->n = 0;
}

uint64_t cli_hindex_hash_bytes(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}
