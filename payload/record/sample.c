/* sample.c - exponential intervals and unbiased weights (sampled path only).
 *
 * No libm: the payload is loaded into targets that may not have it, and
 * libm's log and expm1 (with their errno and rounding-mode care) cost 95
 * and 60 instructions a sample (callgrind). The two routines below are
 * accurate to a few units in the last place over the ranges used here
 * (tests/unit/payload_sample_math.c compares them with libm), far below the
 * sampling noise. */
#include "payload/record/sample.h"

#include <string.h>

#define LN2 0x1.62e42fefa39efp-1
/* ln 2 split for Cody-Waite reduction: k * LN2_HI is exact for k < 2^11 */
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define SQRT2 0x1.6a09e667f3bcdp+0

/* 2^e for -1022 <= e <= 1023, from the bits. */
static double pow2(int e)
{
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

double pl_sample_ln(double u)
{
    /* u = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) with
     * s = (m-1)/(m+1), |s| < 0.172, by its series to s^19 (truncation below
     * 1e-16 relative). u is normal: the callers pass at least 2^-53. */
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int e = (int)(bits >> 52 & 0x7ff) - 1023;
    bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > SQRT2) {
        m *= 0.5;
        e++;
    }
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double t = 2.0 / 19;
    t = t * z + 2.0 / 17;
    t = t * z + 2.0 / 15;
    t = t * z + 2.0 / 13;
    t = t * z + 2.0 / 11;
    t = t * z + 2.0 / 9;
    t = t * z + 2.0 / 7;
    t = t * z + 2.0 / 5;
    t = t * z + 2.0 / 3;
    return (double)e * LN2 + (2.0 * s + s * z * t);
}

/* e^r - 1 for |r| <= ln(2)/2 by its Taylor series to r^12 (truncation
 * below 2e-16 relative), to r^7 where |r| < 1/64 (below 1e-17). */
static double expm1_reduced(double r)
{
    double t;
    if (r > -0x1.0p-6 && r < 0x1.0p-6) {
        t = 1.0 / 5040;
    } else {
        t = 1.0 / 479001600;
        t = t * r + 1.0 / 39916800;
        t = t * r + 1.0 / 3628800;
        t = t * r + 1.0 / 362880;
        t = t * r + 1.0 / 40320;
        t = t * r + 1.0 / 5040;
    }
    t = t * r + 1.0 / 720;
    t = t * r + 1.0 / 120;
    t = t * r + 1.0 / 24;
    t = t * r + 1.0 / 6;
    t = t * r + 0.5;
    return r + r * r * t;
}

double pl_sample_one_minus_exp(double x)
{
    /* x = k ln 2 - r, |r| <= ln(2)/2: e^-x = 2^-k (1 + expm1(r)), and
     * 1 - e^-x = (1 - 2^-k) - 2^-k expm1(r). For k = 0 that is -expm1(r),
     * accurate relative to itself however small x is; for k >= 1 both
     * terms are exact or small next to the result (>= 0.29): no
     * cancellation. */
    if (!(x > 0.0))
        return 0.0;
    if (x >= 40.0) /* e^-40 < 2^-57 */
        return 1.0;
    int k = (int)(x * (1.0 / LN2) + 0.5);
    double r = ((double)k * LN2_HI - x) + (double)k * LN2_LO;
    double em = expm1_reduced(r);
    if (k == 0)
        return -em;
    double sc = pow2(-k);
    return (1.0 - sc) - sc * em;
}

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
    /* u in (0, 1]: 53 random bits, +1 so ln(u) is finite. */
    /* conversions through int64_t (the values are below 2^63): one
     * instruction each, where uint64_t's take a test and two paths */
    double u = (double)(int64_t)((xorshift64s(&s->rng) >> 11) + 1) * 0x1.0p-53;
    double x = -pl_sample_ln(u) * (double)(int64_t)s->rate;
    if (!(x <= 0x1.0p62)) /* also catches NaN */
        return (int64_t)1 << 62;
    int64_t c = (int64_t)x; /* x >= 0: truncation is floor; then the ceiling */
    c += (double)c < x;
    return c < 1 ? 1 : c;
}

void pl_sample_weight(uint64_t size, uint64_t rate, uint64_t *est_bytes, uint64_t *est_objs_fp)
{
    if (rate <= 1 || size == 0) {
        *est_bytes = size;
        *est_objs_fp = PL_OBJ_FP_ONE;
        return;
    }
    /* p = 1 - exp(-size/rate), computed as such (not 1 - exp()) so that it
     * keeps its precision when size << rate. One division for 1/p and
     * rounding by +0.5 (the values are positive) instead of two divisions
     * and two llround calls: a fifth of a default-rate sample's time went
     * here (perf, hook_bench). */
    if ((int64_t)(size | rate) < 0) { /* 2^63 bytes or more: not a heap block */
        *est_bytes = size;
        *est_objs_fp = PL_OBJ_FP_ONE;
        return;
    }
    /* conversions through int64_t: one instruction each (see above) */
    double x = (double)(int64_t)size / (double)(int64_t)rate;
    double p = pl_sample_one_minus_exp(x);
    if (!(p > 0.0) || p >= 1.0) {
        *est_bytes = size;
        *est_objs_fp = PL_OBJ_FP_ONE;
        return;
    }
    double inv = 1.0 / p;
    double b = (double)(int64_t)size * inv;
    *est_bytes = b < 0x1.0p62 ? (uint64_t)(int64_t)(b + 0.5) : UINT64_MAX;
    double o = (double)PL_OBJ_FP_ONE * inv;
    *est_objs_fp = o < 0x1.0p62 ? (uint64_t)(int64_t)(o + 0.5) : UINT64_MAX;
}
