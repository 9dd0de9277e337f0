/* census_index.h - which in-use block holds an address, found in O(1)
 * expected time (census_index.c). */
#ifndef HI_PAYLOAD_CENSUS_INDEX_H
#define HI_PAYLOAD_CENSUS_INDEX_H

#include <stdint.h>

#include "payload/census/heap.h"

#define PL_CENSUS_INDEX_PAGE_SHIFT 12u

/* A run of blocks with gaps below 1 MiB between them ([heap], an arena's
 * heap, mmapped chunks side by side). */
struct pl_census_span {
    uintptr_t lo, hi;       /* from the first block's memory to the last one's end */
    uint64_t first, end;    /* its blocks: [first, end) of cs->blk */
    uint32_t *page;         /* by page from lo's: the first block reaching into it;
                               one more entry, the span's last block */
};

struct pl_census_index {
    struct pl_census_span *span;
    uint64_t nspan;
};

/* Builds the index over cs->blk (sorted, final: the walk is done) into
 * memory of the copy's own, and sets cs->index. 0, or -1 when there is
 * no memory for it (pl_census_find then searches the whole table). */
int pl_census_index_build(struct pl_census *cs);

/* The span holding addr, or NULL. Inline, as what follows: the mark calls
 * them for every word of every block it reaches (a call each, two levels
 * deep, was a tenth of the scan of a heap of pointers). */
static inline const struct pl_census_span *pl_census_index_span(const struct pl_census_index *ix, uintptr_t addr)
{
    uint64_t lo = 0, hi = ix->nspan;
    while (lo < hi) { /* the last span starting at or below addr */
        uint64_t mid = (lo + hi) / 2;
        if (ix->span[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= ix->span[lo - 1].hi)
        return 0;
    return &ix->span[lo - 1];
}

/* addr's entry of sp's page table (sp holds addr). */
static inline const uint32_t *pl_census_index_page(const struct pl_census_span *sp, uintptr_t addr)
{
    return &sp->page[(addr >> PL_CENSUS_INDEX_PAGE_SHIFT) - (sp->lo >> PL_CENSUS_INDEX_PAGE_SHIFT)];
}

/* Index of the block whose memory holds addr, sp being addr's span. */
static inline int64_t pl_census_index_find_in(const struct pl_census *cs, const struct pl_census_span *sp,
                                              uintptr_t addr)
{
    const uint32_t *pg = pl_census_index_page(sp, addr);
    /* A block holding addr reaches into its page (index >= pg[0]) and
     * starts before the next page (index <= pg[1]). */
    uint64_t a = pg[0], b = (uint64_t)pg[1] + 1;
    if (b > sp->end)
        b = sp->end;
    while (b - a > 8) {
        uint64_t mid = (a + b) / 2;
        if (cs->blk[mid].mem <= addr)
            a = mid;
        else
            b = mid;
    }
    for (uint64_t i = b; i-- > a;)
        if (cs->blk[i].mem <= addr)
            return addr < cs->blk[i].mem + pl_blk_usable(&cs->blk[i]) ? (int64_t)i : -1;
    return -1;
}

/* Index of the block whose memory holds addr, or -1 (pl_census_find). */
static inline int64_t pl_census_index_find(const struct pl_census *cs, uintptr_t addr)
{
    const struct pl_census_span *sp = pl_census_index_span(cs->index, addr);
    return sp ? pl_census_index_find_in(cs, sp, addr) : -1;
}

#endif /* HI_PAYLOAD_CENSUS_INDEX_H */
