/* payload_record_thread.c - the exact counts as the hooks write them (payload/
 * thread.h): glibc blocks tallied by their chunk header word add up to
 * exactly what malloc_usable_size says, mmapped blocks included; blocks
 * tallied by usable size add up as given; and the histogram adds a sample's
 * weight and its estimated usable bytes. */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdlib.h>

#include "payload/interpose/family.h"
#include "payload/record/thread.h"

Test(thread, glibc_chunk_tally_is_usable_bytes)
{
    static void *blocks[4096];
    unsigned n = 0, mmapped = 0;
    for (size_t s = 0; s < 1500; s++)
        blocks[n++] = malloc(s);
    for (size_t s = 1500; s < (4u << 20); s = s * 5 / 4 + 3)
        blocks[n++] = malloc(s);
    blocks[n++] = calloc(1, 1u << 20);
    blocks[n++] = memalign(4096, 100000);
    blocks[n++] = memalign(4096, 1u << 20);
    blocks[n++] = aligned_alloc(64, 200);
    struct pl_tally t = { 0 };
    uint64_t want = 0;
    for (unsigned i = 0; i < n; i++) {
        cr_assert_not_null(blocks[i]);
        uint64_t hdr = pl_glibc_header(blocks[i]);
        mmapped += (hdr & 2) != 0;
        pl_tally_chunk(&t, hdr);
        want += malloc_usable_size(blocks[i]);
    }
    cr_expect_gt(mmapped, 3, "the sweep must include mmapped chunks");
    cr_expect_eq(t.chunk_calls, n);
    cr_expect_eq(t.chunk_mmapped, mmapped);
    cr_expect_eq(t.calls, 0);
    cr_expect_eq(pl_tally_usable_bytes(&t), want);
    /* other families' blocks add their usable size as given */
    pl_tally_usable(&t, 100);
    pl_tally_usable(&t, 24);
    cr_expect_eq(t.calls, 2);
    cr_expect_eq(pl_tally_usable_bytes(&t), want + 124);
    for (unsigned i = 0; i < n; i++)
        free(blocks[i]);
}

Test(thread, histogram_from_samples)
{
    static struct pl_thread th;
    /* weight 1 (rate 1): exact */
    pl_thread_hist_sample(&th, 100, 104, PL_OBJ_FP_ONE);
    pl_thread_hist_sample(&th, 127, 136, PL_OBJ_FP_ONE);
    cr_expect_eq(th.c.hist_objs_fp[6], 2 * PL_OBJ_FP_ONE);
    cr_expect_eq(th.c.hist_bytes[6], 240);
    /* weight 2.5: 2.5 objects of 40 usable bytes */
    pl_thread_hist_sample(&th, 33, 40, PL_OBJ_FP_ONE * 5 / 2);
    cr_expect_eq(th.c.hist_objs_fp[5], PL_OBJ_FP_ONE * 5 / 2);
    cr_expect_eq(th.c.hist_bytes[5], 100);
    /* 0 bytes is class 0, huge sizes the top class */
    pl_thread_hist_sample(&th, 0, 24, PL_OBJ_FP_ONE);
    pl_thread_hist_sample(&th, UINT64_MAX, 1, PL_OBJ_FP_ONE);
    cr_expect_eq(th.c.hist_objs_fp[0], PL_OBJ_FP_ONE);
    cr_expect_eq(th.c.hist_objs_fp[HI_HIST_CLASSES - 1], PL_OBJ_FP_ONE);
}
