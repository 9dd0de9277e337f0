/* census_index.h - which in-use block holds an address, found in O(1)
 * expected time (census_index.c). */
#ifndef HI_PAYLOAD_CENSUS_INDEX_H
#define HI_PAYLOAD_CENSUS_INDEX_H

#include <stdint.h>

#include "payload/census/heap.h"

#define PL_CENSUS_INDEX_PAGE_SHIFT 12u
#define PL_CENSUS_INDEX_GRAIN_SHIFT 5u /* 32 bytes: no two blocks start in one (chunks are 32 bytes or more) */
#define PL_CENSUS_INDEX_DONE_SHIFT 4u /* 16 bytes: a block's first 16 are its own (no header, no neighbour) */

/* A page of a span: which blocks start in it, one bit per 32 bytes, and
 * the index of the first block starting at or after the page's start
 * (the one before it may reach into the page). 32 bytes: one cache line
 * holds it, and a look-up reads it and the block's entry, nothing else. */
struct pl_census_page {
    uint64_t starts[2];
    uint64_t first;
    uint64_t unused;
};

/* A run of blocks with gaps below 1 MiB between them ([heap], an arena's
 * heap, mmapped chunks side by side). */
struct pl_census_span {
    uintptr_t lo, hi;       /* from the first block's memory to the last one's end */
    uint64_t first, end;    /* its blocks: [first, end) of cs->blk */
    struct pl_census_page *page; /* by page from lo's */
    uintptr_t done_bias;    /* addr's bit in the index's done bitmap: (addr >> DONE_SHIFT) + done_bias */
};

/* done: a bit per 16 bytes of every span, set by the mark (mark.c) when
 * every block reaching into those 16 bytes is one a word pointing there
 * would change nothing for (marked by the root being marked, or shared,
 * free, the allocator's): such a word is dropped before any look-up. All
 * zeros when built. */
struct pl_census_index {
    struct pl_census_span *span;
    uint64_t nspan;
    uint64_t *done;
    uint64_t done_words;
};

/* The bit of addr (inside span sp) in ix->done. */
static inline uint64_t pl_census_index_grain(const struct pl_census_span *sp, uintptr_t addr)
{
    return (addr >> PL_CENSUS_INDEX_DONE_SHIFT) + sp->done_bias;
}

/* Builds the index over cs->blk (sorted, final: the walk is done) into
 * memory of the copy's own, and sets cs->index. 0, or -1 when there is
 * no memory for it or two blocks start less than 32 bytes apart (a heap
 * no glibc makes; pl_census_find then searches the whole table). */
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
static inline const struct pl_census_page *pl_census_index_page(const struct pl_census_span *sp, uintptr_t addr)
{
    return &sp->page[(addr >> PL_CENSUS_INDEX_PAGE_SHIFT) - (sp->lo >> PL_CENSUS_INDEX_PAGE_SHIFT)];
}

/* The last block starting at or before addr's 32 bytes, from addr's page
 * entry, or -1: the blocks starting in the page up to addr's grain,
 * counted, after those before the page. No search, no branch on the
 * data (a heap of small blocks had up to 8 compares a word). */
static inline __attribute__((always_inline)) int64_t pl_census_index_candidate(const struct pl_census_page *pg, uintptr_t addr)
{
    unsigned g = (unsigned)(addr >> PL_CENSUS_INDEX_GRAIN_SHIFT) & 127u;
    uint64_t upto = ~0ull >> (63u - (g & 63u)); /* bits 0..g of g's word */
    uint64_t lo = g < 64 ? pg->starts[0] & upto : pg->starts[0];
    uint64_t hi = g < 64 ? 0 : pg->starts[1] & upto;
    return (int64_t)pg->first + __builtin_popcountll(lo) + __builtin_popcountll(hi) - 1;
}

/* cand (pl_census_index_candidate's answer for addr) made the index of
 * the block holding addr, or -1. A block starting in addr's grain but
 * after addr gives way to the one before it. */
static inline __attribute__((always_inline)) int64_t pl_census_index_resolve(const struct pl_census *cs, int64_t cand, uintptr_t addr)
{
    if (cand >= 0 && cs->blk[cand].mem > addr)
        cand--;
    if (cand < 0)
        return -1;
    const struct pl_blk *b = &cs->blk[cand];
    return addr < b->mem + pl_blk_usable(b) ? cand : -1;
}

/* Index of the block whose memory holds addr, sp being addr's span. */
static inline int64_t pl_census_index_find_in(const struct pl_census *cs, const struct pl_census_span *sp,
                                              uintptr_t addr)
{
    return pl_census_index_resolve(cs, pl_census_index_candidate(pl_census_index_page(sp, addr), addr), addr);
}

/* Index of the block whose memory holds addr, or -1 (pl_census_find). */
static inline int64_t pl_census_index_find(const struct pl_census *cs, uintptr_t addr)
{
    const struct pl_census_span *sp = pl_census_index_span(cs->index, addr);
    return sp ? pl_census_index_find_in(cs, sp, addr) : -1;
}

#endif /* HI_PAYLOAD_CENSUS_INDEX_H */
