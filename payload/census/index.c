/* census_index.c - which in-use block holds an address, in O(1) expected.
 *
 * The mark looks up every aligned word of every block it reaches (a heap
 * of object graphs is mostly pointers): a binary search over the whole
 * table of blocks took ~18 dependent reads into a table of megabytes for
 * each, and the scan ran at 0.11 GiB/s on a heap of 256 MiB of pointers.
 * Here the blocks are cut into spans (runs of blocks with gaps below
 * SPAN_GAP between them: [heap], an arena's heap, mmapped chunks side by
 * side), and each page of a span has the index of the first block that
 * reaches into it. A word is rejected unless it falls in a span (a binary
 * search over a few spans), and is then looked for among the blocks that
 * touch its page: one or two for blocks of a page or more, a short search
 * for small ones. The index costs 4 bytes a page of heap (0.1%), mapped
 * in the copy, which is the copy's own memory. */
#include "payload/census/index.h"

#include <stddef.h>

#include "payload/census/heap.h"

#define PAGE_SHIFT 12u
#define SPAN_GAP (1u << 20) /* a gap this wide starts a new span: its pages cost 1 KiB of index */

struct span {
    uintptr_t lo, hi;       /* from the first block's memory to the last one's end */
    uint64_t first, end;    /* its blocks: [first, end) of cs->blk */
    uint32_t *page;         /* by page from lo's: the first block reaching into it;
                               one more entry, the span's last block */
};

struct pl_census_index {
    struct span *span;
    uint64_t nspan;
};

static uintptr_t blk_end(const struct pl_blk *b)
{
    return b->mem + pl_blk_usable(b);
}

static uint64_t span_pages(uintptr_t lo, uintptr_t hi)
{
    return ((hi - 1) >> PAGE_SHIFT) - (lo >> PAGE_SHIFT) + 1;
}

/* The spans of cs's blocks, in order, into out when not NULL; their count. */
static uint64_t each_span(const struct pl_census *cs, struct span *out)
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
    if (!cs->nblk || cs->nblk >= UINT32_MAX)
        return -1;
    uint64_t nspan = each_span(cs, NULL);
    struct pl_census_index *ix = pl_census_map(sizeof(*ix) + nspan * sizeof(struct span));
    if (!ix)
        return -1;
    ix->span = (struct span *)(ix + 1);
    ix->nspan = each_span(cs, ix->span);
    uint64_t entries = 0;
    for (uint64_t s = 0; s < ix->nspan; s++)
        entries += span_pages(ix->span[s].lo, ix->span[s].hi) + 1;
    uint32_t *page = pl_census_map(entries * sizeof(uint32_t));
    if (!page)
        return -1;
    for (uint64_t s = 0; s < ix->nspan; s++) {
        struct span *sp = &ix->span[s];
        uint64_t n = span_pages(sp->lo, sp->hi), j = sp->first;
        uintptr_t base = sp->lo & ~(((uintptr_t)1 << PAGE_SHIFT) - 1);
        sp->page = page;
        for (uint64_t k = 0; k < n; k++) {
            uintptr_t start = base + (k << PAGE_SHIFT);
            while (blk_end(&cs->blk[j]) <= start) /* the span's last block ends past every page start */
                j++;
            page[k] = (uint32_t)j;
        }
        page[n] = (uint32_t)(sp->end - 1);
        page += n + 1;
    }
    cs->index = ix;
    return 0;
}

int64_t pl_census_index_find(const struct pl_census *cs, uintptr_t addr)
{
    const struct pl_census_index *ix = cs->index;
    uint64_t lo = 0, hi = ix->nspan;
    while (lo < hi) { /* the last span starting at or below addr */
        uint64_t mid = (lo + hi) / 2;
        if (ix->span[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct span *sp = &ix->span[lo - 1];
    if (addr >= sp->hi)
        return -1;
    uint64_t k = (addr >> PAGE_SHIFT) - (sp->lo >> PAGE_SHIFT);
    /* A block holding addr reaches into its page (index >= page[k]) and
     * starts before the next page (index <= page[k + 1]). */
    uint64_t a = sp->page[k], b = (uint64_t)sp->page[k + 1] + 1;
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
            return addr < blk_end(&cs->blk[i]) ? (int64_t)i : -1;
    return -1;
}
