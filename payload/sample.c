/* sample.c - exponential intervals and unbiased weights (sampled path only). */
#include "sample.h"

#include <math.h>

static uint64_t xorshift64s(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* splitmix64: spreads a weak seed (tid, time, address) over all bits. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void pl_sample_init(struct pl_sampler *s, uint64_t seed, uint64_t rate)
{
    s->rng = splitmix64(seed);
    if (s->rng == 0)
        s->rng = 0x853c49e6748fea9bull;
    s->rate = rate ? rate : 1;
    s->countdown = pl_sample_next_interval(s);
}

int64_t pl_sample_next_interval(struct pl_sampler *s)
{
    if (s->rate <= 1)
        return 0;
    /* u in (0, 1]: 53 random bits, +1 so log(u) is finite. */
    double u = (double)((xorshift64s(&s->rng) >> 11) + 1) * 0x1.0p-53;
    double x = ceil(-log(u) * (double)s->rate);
    if (x < 1.0)
        x = 1.0;
    if (x > 0x1.0p62)
        x = 0x1.0p62;
    return (int64_t)x;
}

void pl_sample_weight(uint64_t size, uint64_t rate, uint64_t *est_bytes, uint64_t *est_objs_fp)
{
    if (rate <= 1 || size == 0) {
        *est_bytes = size;
        *est_objs_fp = PL_OBJ_FP_ONE;
        return;
    }
    /* p = 1 - exp(-size/rate); -expm1 keeps precision when size << rate.
     * One division for 1/p and rounding by +0.5 (the values are positive)
     * instead of two divisions and two llround calls: a fifth of a
     * default-rate sample's time went here (perf, hook_bench). */
    double x = (double)size / (double)rate;
    /* exp(-40) < 2^-57: from there on p is 1 in double precision */
    double p = x < 40.0 ? -expm1(-x) : 1.0;
    if (!(p > 0.0) || p >= 1.0) {
        *est_bytes = size;
        *est_objs_fp = PL_OBJ_FP_ONE;
        return;
    }
    double inv = 1.0 / p;
    double b = (double)size * inv;
    *est_bytes = b < 0x1.0p63 ? (uint64_t)(b + 0.5) : UINT64_MAX;
    double o = (double)PL_OBJ_FP_ONE * inv;
    *est_objs_fp = o < 0x1.0p63 ? (uint64_t)(o + 0.5) : UINT64_MAX;
}
