/* census_index.c - which in-use block holds an address, in O(1) expected.
 *
 * The mark looks up every aligned word of every block it reaches (a heap
 * of object graphs is mostly pointers): a binary search over the whole
 * table of blocks took ~18 dependent reads into a table of megabytes for
 * each, and the scan ran at 0.11 GiB/s on a heap of 256 MiB of pointers.
 * Here the blocks are cut into spans (runs of blocks with gaps below
 * SPAN_GAP between them: [heap], an arena's heap, mmapped chunks side by
 * side), and each page of a span has a bit for each 32 bytes where a block
 * starts and the index of the first block starting in or after it. A word
 * is rejected unless it falls in a span (the last one hit, else a binary
 * search over a few spans); its block is then the page's first plus the
 * starts before the word in the page (two popcounts), or the one before
 * it, and its entry says whether the word lies inside. A search among the
 * blocks touching the page, as before, cost up to 8 unpredictable
 * compares a word on a heap of small blocks. The index costs 32 bytes a
 * page of heap (0.8%), and the mark's bitmap of grains done (index.h) a
 * bit per 16 bytes (0.8%), mapped in the copy, which is the copy's own
 * memory. */
#include "payload/census/index.h"

#include <stddef.h>

#include "payload/census/heap.h"

#define PAGE_SHIFT PL_CENSUS_INDEX_PAGE_SHIFT
#define GRAIN_SHIFT PL_CENSUS_INDEX_GRAIN_SHIFT
#define SPAN_GAP (1u << 20) /* a gap this wide starts a new span: its pages cost 1 KiB of index */

static uintptr_t blk_end(const struct pl_blk *b)
{
    return b->mem + pl_blk_usable(b);
}

static uint64_t span_pages(uintptr_t lo, uintptr_t hi)
{
    return ((hi - 1) >> PAGE_SHIFT) - (lo >> PAGE_SHIFT) + 1;
}

/* The spans of cs's blocks, in order, into out when not NULL; their count. */
static uint64_t each_span(const struct pl_census *cs, struct pl_census_span *out)
{
    uint64_t n = 0, first = 0;
    for (uint64_t i = 1; i <= cs->nblk; i++) {
        if (i < cs->nblk && cs->blk[i].mem - blk_end(&cs->blk[i - 1]) <= SPAN_GAP)
            continue;
        if (out) {
            out[n].lo = cs->blk[first].mem;
            out[n].hi = blk_end(&cs->blk[i - 1]);
            out[n].first = first;
            out[n].end = i;
        }
        n++;
        first = i;
    }
    return n;
}

int pl_census_index_build(struct pl_census *cs)
{
    if (!cs->nblk || cs->nblk >= INT64_MAX)
        return -1;
    for (uint64_t i = 1; i < cs->nblk; i++) /* at most one block starts in a grain */
        if ((cs->blk[i].mem >> GRAIN_SHIFT) <= (cs->blk[i - 1].mem >> GRAIN_SHIFT))
            return -1;
    uint64_t nspan = each_span(cs, NULL);
    struct pl_census_index *ix = pl_census_map(sizeof(*ix) + nspan * sizeof(struct pl_census_span));
    if (!ix)
        return -1;
    ix->span = (struct pl_census_span *)(ix + 1);
    ix->nspan = each_span(cs, ix->span);
    uint64_t entries = 0;
    for (uint64_t s = 0; s < ix->nspan; s++)
        entries += span_pages(ix->span[s].lo, ix->span[s].hi);
    struct pl_census_page *page = pl_census_map(entries * sizeof(*page)); /* zeros: no start anywhere */
    uint64_t grains = 0;
    for (uint64_t s = 0; s < ix->nspan; s++) {
        ix->span[s].done_bias = grains - (ix->span[s].lo >> PL_CENSUS_INDEX_DONE_SHIFT);
        grains += ((ix->span[s].hi - 1) >> PL_CENSUS_INDEX_DONE_SHIFT) - (ix->span[s].lo >> PL_CENSUS_INDEX_DONE_SHIFT) + 1;
    }
    ix->done_words = grains / 64 + 1;
    ix->done = pl_census_map(ix->done_words * sizeof(uint64_t)); /* 0.8% of the heap */
    if (!page || !ix->done)
        return -1;
    for (uint64_t s = 0; s < ix->nspan; s++) {
        struct pl_census_span *sp = &ix->span[s];
        uint64_t n = span_pages(sp->lo, sp->hi), j = sp->first;
        uintptr_t base = sp->lo & ~(((uintptr_t)1 << PAGE_SHIFT) - 1);
        sp->page = page;
        for (uint64_t k = 0; k < n; k++) {
            uintptr_t start = base + (k << PAGE_SHIFT);
            while (j < sp->end && cs->blk[j].mem < start)
                j++;
            page[k].first = j;
        }
        for (uint64_t i = sp->first; i < sp->end; i++) {
            uintptr_t mem = cs->blk[i].mem;
            unsigned g = (unsigned)(mem >> GRAIN_SHIFT) & 127u;
            page[(mem >> PAGE_SHIFT) - (base >> PAGE_SHIFT)].starts[g >> 6] |= 1ull << (g & 63u);
        }
        page += n;
    }
    cs->index = ix;
    return 0;
}
