/* payload_python_splice.c - Python frames among native ones
 * (payload/python/splice.h) and the frame words they travel as
 * (common/proto.h: hi_frame_python, hi_frame_kind). */
#include <criterion/criterion.h>

#include "common/proto.h"
#include "payload/python/splice.h"

#define EVAL_LO 0x5000u
#define EVAL_HI 0x6000u

/* Return addresses: 0x10xx ordinary code, 0x5xxx inside the eval loop. */
static const uint64_t native[] = { 0x1001, 0x1101, 0x5101, 0x1201, 0x5201, 0x1301 };
static const struct pl_py_frame py[] = { { 0xa000, 3, 0, 0 }, { 0xb000, 7, 1, 0 }, { 0xc000, 9, 1, 0 } };
static const uint32_t ids[] = { 1, 2, 3 };

Test(python_splice, frames_above_each_eval_activation)
{
    uint64_t out[16];
    unsigned placed;
    unsigned n = pl_py_splice(native, 6, py, ids, 3, EVAL_LO, EVAL_HI, out, 16, &placed);
    cr_assert_eq(placed, 3);
    const uint64_t want[] = { 0x1001, 0x1101, hi_frame_python(1, 3), hi_frame_python(2, 7), 0x5101, 0x1201,
                              hi_frame_python(3, 9), 0x5201, 0x1301 };
    cr_assert_eq(n, 9);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(out[i], want[i], "word %u: %#lx, want %#lx", i, (unsigned long)out[i], (unsigned long)want[i]);
}

Test(python_splice, words_tell_their_kind)
{
    cr_assert_eq(hi_frame_kind(0x7fffffffe000u), HI_FRAME_NATIVE);
    uint64_t w = hi_frame_python(0x123456, 0x89);
    cr_assert_eq(hi_frame_kind(w), HI_FRAME_PYTHON);
    cr_assert_eq((w & HI_FRAME_VALUE_MASK) >> 32, 0x123456);
    cr_assert_eq((uint32_t)w, 0x89);
}

Test(python_splice, bounded_by_max)
{
    uint64_t out[4];
    unsigned placed;
    unsigned n = pl_py_splice(native, 6, py, ids, 3, EVAL_LO, EVAL_HI, out, 4, &placed);
    cr_assert_eq(n, 4);
    cr_assert_eq(placed, 2, "the third Python frame is past the bound");
    cr_assert_eq(out[3], hi_frame_python(2, 7));
}

Test(python_splice, frames_past_a_short_native_walk_are_left_out)
{
    uint64_t out[16];
    /* The native walk stopped after the first eval frame. */
    unsigned placed;
    unsigned n = pl_py_splice(native, 3, py, ids, 3, EVAL_LO, EVAL_HI, out, 16, &placed);
    cr_assert_eq(n, 5);
    cr_assert_eq(placed, 2);
    cr_assert_eq(out[4], 0x5101);
}

Test(python_splice, no_eval_frames_no_python_frames)
{
    uint64_t out[16];
    const uint64_t plain[] = { 0x1001, 0x1101 };
    unsigned placed;
    cr_assert_eq(pl_py_splice(plain, 2, py, ids, 3, EVAL_LO, EVAL_HI, out, 16, &placed), 2);
    cr_assert_eq(placed, 0);
}
