/* sample.h - Poisson sampling of allocations by bytes.
 *
 * Every allocated byte is a sampling point with probability 1/rate, so the
 * distance to the next point is exponential with mean `rate`. Each thread
 * keeps a countdown of bytes to that point; an allocation that reaches it is
 * sampled and the countdown is drawn anew (the exponential is memoryless, so
 * the remainder of the sampled block needs no bookkeeping). A block of s
 * bytes is therefore sampled with p = 1 - exp(-s/rate), and s/p bytes and
 * 1/p objects are unbiased estimates of what it stands for.
 *
 * The countdown is the ceiling of the exponential draw, so for integer s the
 * test "countdown - s <= 0" is exactly "draw <= s" and p above is exact.
 * rate == 1 means "record everything": the countdown is always 0, every
 * allocation (also of 0 bytes) is sampled with weight exactly 1.
 *
 * The unsampled path (pl_sample_step) is one subtraction and one compare:
 * integers only. Floating point is used only when a sample is taken.
 */
#ifndef HI_PAYLOAD_SAMPLE_H
#define HI_PAYLOAD_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Estimated object counts are fixed point with this many fractional bits:
 * 1/p is 1.16 for a 1 MiB block at the default rate, so an integer would be
 * 14% off. */
#define PL_OBJ_FP_SHIFT 16
#define PL_OBJ_FP_ONE (1ull << PL_OBJ_FP_SHIFT)

/* Per-thread sampler state (lives in the thread's initial-exec TLS). */
struct pl_sampler {
    int64_t countdown; /* bytes until the next sample; <= 0: sample now */
    uint64_t rng;      /* xorshift64* state, never 0 */
    uint64_t rate;     /* mean interval the countdown was drawn with */
};

/* Counts n bytes; true when this allocation is to be sampled (the caller
 * then takes the sample and calls pl_sample_next_interval). */
static inline int pl_sample_step(struct pl_sampler *s, size_t n)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    /* One subtract from memory and the branch on its flags; from C, GCC
     * makes it a load, a subtract, a store, a test and the branch. */
    int hit;
    __asm__("subq %2, %0" : "+m"(s->countdown), "=@ccle"(hit) : "er"((int64_t)n));
    return hit;
#else
    s->countdown -= (int64_t)n;
    return s->countdown <= 0;
#endif
}

/* Seeds the generator and draws the first countdown for `rate` (>= 1). */
void pl_sample_init(struct pl_sampler *s, uint64_t seed, uint64_t rate);

/* Draws the next interval in bytes with mean s->rate (0 when rate == 1). */
int64_t pl_sample_next_interval(struct pl_sampler *s);

/* Unbiased weights of one sampled block of `size` bytes taken at `rate`:
 * *est_bytes = size/p (rounded), *est_objs_fp = 1/p in PL_OBJ_FP_ONE units. */
void pl_sample_weight(uint64_t size, uint64_t rate, uint64_t *est_bytes, uint64_t *est_objs_fp);

/* ln(u) for a normal u in (0, 1] (the interval's uniform draw), without
 * libm: within 1e-15 relative of libm's log (unit test; 3.2e-16 seen). */
double pl_sample_ln(double u);

/* 1 - e^-x for x >= 0 (0 for x <= 0 or NaN, 1 from x = 40 on), without
 * libm: within 1e-15 relative of -expm1(-x) (unit test; 7.6e-16 seen). */
double pl_sample_one_minus_exp(double x);

#endif /* HI_PAYLOAD_SAMPLE_H */
