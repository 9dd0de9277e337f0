/* payload_census_index.c - the census's index of blocks by page
 * (payload/census/index.h) answers as the binary search over the whole
 * table does, for every address in and around layouts of blocks like the
 * walk makes: small chunks many to a page, blocks of many pages, mmapped
 * chunks (no borrowed prev_size), gaps that start new spans. */
#include <criterion/criterion.h>

#include <string.h>

#include "payload/census/heap.h"
#include "payload/census/index.h"

#define MAX_BLK 20000u

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 17;
}

/* Blocks from base: sizes of 32 B to 64 KiB, some mmapped, gaps of 0 to
 * 4 MiB now and then (a gap over 1 MiB starts a span). */
static void layout(struct pl_census *cs, uintptr_t base, unsigned n)
{
    static struct pl_blk blk[MAX_BLK];
    memset(cs, 0, sizeof(*cs));
    cs->blk = blk;
    uintptr_t chunk = base;
    for (unsigned i = 0; i < n; i++) {
        uint64_t r = next() % 100, csize;
        if (r < 60)
            csize = 32 + 16 * (next() % 8);
        else if (r < 90)
            csize = 16 * (1 + next() % 400);
        else
            csize = 4096 * (1 + next() % 16);
        if (csize < 32)
            csize = 32;
        uint32_t flags = next() % 20 == 0 ? PL_BLK_MMAP : 0;
        if (flags) {
            chunk = (chunk + 4095) & ~(uintptr_t)4095;
            csize = (csize + 4095) & ~(uint64_t)4095;
        }
        blk[i].mem = chunk + 16;
        blk[i].csize16 = (uint32_t)(csize / 16);
        blk[i].flags = flags;
        chunk += csize;
        if (next() % 50 == 0) /* a free chunk or a hole between mappings */
            chunk += 16 * (next() % (1u << 18));
    }
    cs->nblk = n;
}

static int64_t whole_table(const struct pl_census *cs, uintptr_t addr)
{
    for (uint64_t i = 0; i < cs->nblk; i++)
        if (addr >= cs->blk[i].mem && addr < cs->blk[i].mem + pl_blk_usable(&cs->blk[i]))
            return (int64_t)i;
    return -1;
}

static void check(struct pl_census *cs, uintptr_t addr)
{
    int64_t want = whole_table(cs, addr);
    int64_t got = pl_census_index_find(cs, addr);
    cr_assert_eq(got, want, "address %#lx: index %ld, whole table %ld", (unsigned long)addr, (long)got, (long)want);
    cr_assert_eq(pl_census_find(cs, addr), want);
}

Test(census_index, answers_as_the_whole_table)
{
    struct pl_census cs;
    for (unsigned round = 0; round < 4; round++) {
        layout(&cs, 0x555500000000ull + round * 0x10000000ull, 2000 + round * 1000);
        cr_assert_eq(pl_census_index_build(&cs), 0);
        cr_assert_not_null(cs.index);
        const struct pl_blk *first = &cs.blk[0], *last = &cs.blk[cs.nblk - 1];
        uintptr_t lo = first->mem - 8192, hi = last->mem + pl_blk_usable(last) + 8192;
        /* every block's edges, and random addresses over the whole range */
        for (uint64_t i = 0; i < cs.nblk; i++) {
            uintptr_t m = cs.blk[i].mem, e = m + pl_blk_usable(&cs.blk[i]);
            check(&cs, m - 16);
            check(&cs, m - 1);
            check(&cs, m);
            check(&cs, m + 8);
            check(&cs, e - 1);
            check(&cs, e);
            check(&cs, (m & ~(uintptr_t)4095) + 4096);
        }
        for (unsigned k = 0; k < 20000; k++)
            check(&cs, lo + next() % (hi - lo));
        check(&cs, 0);
        check(&cs, UINTPTR_MAX);
    }
}

Test(census_index, one_block)
{
    struct pl_census cs;
    layout(&cs, 0x7f0000000000ull, 1);
    cr_assert_eq(pl_census_index_build(&cs), 0);
    uintptr_t m = cs.blk[0].mem;
    for (uintptr_t a = m - 64; a < m + pl_blk_usable(&cs.blk[0]) + 64; a += 8)
        check(&cs, a);
}

Test(census_index, none_for_no_blocks)
{
    struct pl_census cs;
    memset(&cs, 0, sizeof(cs));
    cr_assert_eq(pl_census_index_build(&cs), -1);
    cr_assert_null(cs.index);
    cr_assert_eq(pl_census_find(&cs, 0x1000), -1);
}
