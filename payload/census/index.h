/* census_index.h - which in-use block holds an address, found in O(1)
 * expected time (census_index.c). */
#ifndef HI_PAYLOAD_CENSUS_INDEX_H
#define HI_PAYLOAD_CENSUS_INDEX_H

#include <stdint.h>

struct pl_census;
struct pl_census_index;

/* Builds the index over cs->blk (sorted, final: the walk is done) into
 * memory of the copy's own, and sets cs->index. 0, or -1 when there is
 * no memory for it (pl_census_find then searches the whole table). */
int pl_census_index_build(struct pl_census *cs);

/* Index of the block whose memory holds addr, or -1 (pl_census_find). */
int64_t pl_census_index_find(const struct pl_census *cs, uintptr_t addr);

#endif /* HI_PAYLOAD_CENSUS_INDEX_H */
