/* payload_record_maptrack.c - the sampled-mapping range table (payload/record/maptrack.h)
 * and the bucket kind (bucket.h): a whole, a head, a tail and a hole taken
 * out of a mapping leave exactly the raw bytes that remain and estimates in
 * proportion; objects go with the last piece; a new mapping over stale
 * ranges replaces them; one stack of two kinds is two buckets. */
#include <criterion/criterion.h>

#include "payload/record/bucket.h"
#include "payload/record/maptrack.h"
#include "payload/record/sample.h"

#define PG 4096u
#define BASE ((uintptr_t)0x7f0000000000ull)

static int32_t bk;

static void setup(void)
{
    cr_assert_eq(pl_bucket_init(), 0);
    cr_assert_eq(pl_maptrack_init(), 0);
    pl_bucket_reset();
    pl_maptrack_reset();
    uintptr_t pcs[2] = { 0x401000, 0x402000 };
    bk = pl_bucket_intern_kind(77, pcs, 2, 1, HI_KIND_MMAP);
    cr_assert(bk >= 0);
}

/* A sampled mapping of npages pages at page `at`, standing for twice its
 * bytes and 2 objects (p = 1/2). */
static void add(uint64_t at, uint64_t npages)
{
    uint64_t n = npages * PG;
    struct pl_mapent e = { BASE + at * PG, BASE + (at + npages) * PG, 2 * n, 2 * PL_OBJ_FP_ONE, 1, bk, 1 };
    int r = pl_maptrack_insert(&e);
    cr_assert_eq(r, 0);
    pl_bucket_add(bk, n, 2 * n, 2 * PL_OBJ_FP_ONE, 1);
}

static const struct pl_bucket *b(void)
{
    return pl_bucket_at((uint32_t)bk);
}

static void cut(uint64_t at, uint64_t npages)
{
    pl_maptrack_cut(BASE + at * PG, BASE + (at + npages) * PG);
}

Test(maptrack, whole_mapping, .init = setup)
{
    add(0, 16);
    cr_expect_eq(b()->raw_live_bytes, 16 * PG);
    cr_expect_eq(b()->est_live_bytes, 32 * PG);
    cut(0, 16);
    cr_expect_eq(b()->raw_live_bytes, 0);
    cr_expect_eq(b()->raw_live_objs, 0);
    cr_expect_eq(b()->est_live_bytes, 0);
    cr_expect_eq(b()->est_live_objs_fp, 0);
    cr_expect_eq(b()->raw_alloc_bytes, 16 * PG);
    cr_expect_eq(pl_maptrack_count(), 0);
}

Test(maptrack, head_tail_hole, .init = setup)
{
    add(0, 16);
    cut(0, 2);   /* head */
    cut(14, 4);  /* tail, and beyond the mapping */
    cr_expect_eq(b()->raw_live_bytes, 12 * PG);
    cr_expect_eq(b()->est_live_bytes, 24 * PG);
    cr_expect_eq(b()->raw_live_objs, 1); /* still there */
    cut(6, 2);   /* hole: two pieces */
    cr_expect_eq(pl_maptrack_count(), 2);
    cr_expect_eq(b()->raw_live_bytes, 10 * PG);
    cr_expect_eq(b()->est_live_bytes, 20 * PG);
    cr_expect(pl_maptrack_overlaps(BASE + 3 * PG, BASE + 4 * PG));
    cr_expect(!pl_maptrack_overlaps(BASE + 6 * PG, BASE + 8 * PG));
    cr_expect(pl_maptrack_overlaps(BASE + 8 * PG, BASE + 9 * PG));
    cut(2, 4);   /* the head piece, which holds the object */
    cr_expect_eq(b()->raw_live_objs, 0);
    cr_expect_eq(b()->est_live_objs_fp, 0);
    cr_expect_eq(b()->raw_live_bytes, 6 * PG);
    cut(0, 100); /* the rest */
    cr_expect_eq(b()->raw_live_bytes, 0);
    cr_expect_eq(b()->est_live_bytes, 0);
    cr_expect_eq(pl_maptrack_count(), 0);
}

Test(maptrack, cut_across_several, .init = setup)
{
    add(0, 4);
    add(10, 4);
    add(20, 4);
    add(30, 4);
    cut(2, 20); /* tail of #1, all of #2, head of #3 */
    cr_expect_eq(pl_maptrack_count(), 3);
    cr_expect_eq(b()->raw_live_bytes, (2 + 2 + 4) * PG);
    cr_expect_eq(b()->est_live_bytes, 2 * (2 + 2 + 4) * PG);
    cr_expect_eq(b()->raw_live_objs, 3);
    cr_expect(!pl_maptrack_overlaps(BASE + 2 * PG, BASE + 22 * PG));
    cr_expect(pl_maptrack_overlaps(BASE + 22 * PG, BASE + 23 * PG));
}

Test(maptrack, new_mapping_replaces_stale, .init = setup)
{
    add(0, 8);
    add(4, 8); /* the old one was unmapped where we did not see it */
    cr_expect_eq(pl_maptrack_count(), 2);
    cr_expect_eq(b()->raw_live_bytes, 12 * PG);
    cr_expect_eq(b()->raw_live_objs, 2);
}

Test(maptrack, estimates_never_below_raw, .init = setup)
{
    /* a weight that does not divide evenly: 3 pages standing for 7 */
    struct pl_mapent e = { BASE, BASE + 3 * PG, 7 * PG + 1, PL_OBJ_FP_ONE + 5, 1, bk, 1 };
    cr_assert_eq(pl_maptrack_insert(&e), 0);
    pl_bucket_add(bk, 3 * PG, e.est_bytes, e.est_objs_fp, 1);
    cut(1, 1);
    cr_expect_eq(b()->raw_live_bytes, 2 * PG);
    cr_expect_geq(b()->est_live_bytes, 2 * PG);
    cut(0, 3);
    cr_expect_eq(b()->est_live_bytes, 0);
    cr_expect_eq(b()->est_live_objs_fp, 0);
}

Test(maptrack, kinds_are_buckets_of_their_own, .init = setup)
{
    uintptr_t pcs[2] = { 0x401000, 0x402000 };
    int32_t m = pl_bucket_intern_kind(77, pcs, 2, 1, HI_KIND_MALLOC);
    cr_assert(m >= 0);
    cr_expect_neq(m, bk);
    cr_expect_eq(pl_bucket_intern(77, pcs, 2, 1), m);
    cr_expect_eq(pl_bucket_intern_kind(77, pcs, 2, 1, HI_KIND_MMAP), bk);
    cr_expect_eq(pl_bucket_at((uint32_t)bk)->kind, HI_KIND_MMAP);
    cr_expect_eq(pl_bucket_at((uint32_t)m)->kind, HI_KIND_MALLOC);
}

Test(maptrack, take_and_put_back, .init = setup)
{
    add(0, 8);
    add(10, 4);
    struct pl_mapent parts[8];
    unsigned n = pl_maptrack_take(BASE + 4 * PG, BASE + 12 * PG, parts, 8); /* tail of #1, head of #2 */
    cr_assert_eq(n, 2);
    cr_expect_eq(b()->raw_live_bytes, 6 * PG);
    cr_expect_eq(b()->est_live_bytes, 12 * PG);
    pl_maptrack_put_back(parts, n); /* the call failed: all as it was */
    cr_expect_eq(b()->raw_live_bytes, 12 * PG);
    cr_expect_eq(b()->est_live_bytes, 24 * PG);
    cr_expect_eq(b()->raw_live_objs, 2);
    cut(0, 100);
    cr_expect_eq(b()->raw_live_bytes, 0);
    cr_expect_eq(b()->est_live_bytes, 0);
    cr_expect_eq(b()->raw_live_objs, 0);
    cr_expect_eq(b()->est_live_objs_fp, 0);
}
