/* payload_record_sample_math.c - the payload's own ln and 1 - e^-x (payload/record/sample.c,
 * no libm in the target) against libm over every input the sampler uses,
 * the weights they give against libm's, and the interval's distribution:
 * mean and quantiles of many draws. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "payload/record/sample.h"

static double rel(double got, double want)
{
    if (got == want)
        return 0;
    return fabs(got - want) / fabs(want);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The interval's uniform is k * 2^-53 for k in [1, 2^53]: every binade,
 * both ends of each, and random k. */
Test(sample_math, ln_within_1e15_of_libm)
{
    double worst = 0, at = 0;
    for (int e = 0; e <= 53; e++) {
        uint64_t lo = 1ull << e, hi = e == 53 ? lo : (lo << 1) - 1;
        uint64_t ks[] = { lo, lo + 1, hi, hi - 1, (lo + hi) / 2, (uint64_t)((double)lo * 1.41421356) };
        for (unsigned i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            double u = (double)ks[i] * 0x1.0p-53;
            double r = rel(pl_sample_ln(u), log(u));
            if (r > worst)
                worst = r, at = u;
        }
    }
    for (int i = 0; i < 2000000; i++) {
        double u = (double)((next_random() >> 11) + 1) * 0x1.0p-53;
        double r = rel(pl_sample_ln(u), log(u));
        if (r > worst)
            worst = r, at = u;
    }
    cr_expect_eq(pl_sample_ln(1.0), 0.0);
    cr_log_info("ln: worst relative error %.3g at u = %.17g", worst, at);
    cr_expect_lt(worst, 1e-15, "ln: relative error %.3g at u = %.17g", worst, at);
}

/* x = size / rate: from 1 byte at a rate of 2^40 up to where p is 1. */
Test(sample_math, one_minus_exp_within_1e15_of_libm)
{
    double worst = 0, at = 0;
    for (int i = 0; i < 2000000; i++) {
        /* log-uniform over [2^-41, 2^6], and uniform over [0, 41] */
        double x = i & 1 ? ldexp(1.0 + (double)(next_random() >> 11) * 0x1.0p-53, (int)(next_random() % 47) - 41)
                         : (double)(next_random() >> 11) * 0x1.0p-53 * 41.0;
        double r = rel(pl_sample_one_minus_exp(x), -expm1(-x));
        if (r > worst)
            worst = r, at = x;
    }
    /* around each switch of the range reduction and of the short series */
    for (int k = 0; k < 60; k++)
        for (int d = -4; d <= 4; d++) {
            double x = nextafter((k + 0.5) * M_LN2, d < 0 ? 0 : 100);
            x += d * 1e-16 * x;
            double y = 0x1.0p-6 + d * 0x1.0p-58;
            double rx = rel(pl_sample_one_minus_exp(x), -expm1(-x)), ry = rel(pl_sample_one_minus_exp(y), -expm1(-y));
            if (rx > worst)
                worst = rx, at = x;
            if (ry > worst)
                worst = ry, at = y;
        }
    cr_log_info("1 - e^-x: worst relative error %.3g at x = %.17g", worst, at);
    cr_expect_lt(worst, 1e-15, "1 - e^-x: relative error %.3g at x = %.17g", worst, at);
    cr_expect_eq(pl_sample_one_minus_exp(0.0), 0.0);
    cr_expect_eq(pl_sample_one_minus_exp(-1.0), 0.0);
    cr_expect_eq(pl_sample_one_minus_exp(NAN), 0.0);
    cr_expect_eq(pl_sample_one_minus_exp(40.0), 1.0);
    cr_expect_eq(pl_sample_one_minus_exp(1e300), 1.0);
}

/* The weights as libm would give them: bytes within rounding (1 byte),
 * objects within one fixed-point unit. */
Test(sample_math, weights_match_libm)
{
    uint64_t rates[] = { 2, 100, 4096, 512 * 1024, 1ull << 30, 1ull << 40 };
    for (unsigned r = 0; r < sizeof rates / sizeof rates[0]; r++)
        for (int i = 0; i < 200000; i++) {
            uint64_t size = 1 + (next_random() >> (next_random() % 64 | 16));
            uint64_t b, o;
            pl_sample_weight(size, rates[r], &b, &o);
            double x = (double)size / (double)rates[r];
            double p = x < 40.0 ? -expm1(-x) : 1.0;
            double wb = p >= 1.0 ? (double)size : (double)size / p;
            double wo = p >= 1.0 ? (double)PL_OBJ_FP_ONE : (double)PL_OBJ_FP_ONE / p;
            if (wb >= 0x1.0p63)
                continue;
            cr_assert_leq(fabs((double)b - wb), 1.0 + wb * 1e-15, "size %lu rate %lu: %lu bytes, libm %.3f",
                          (unsigned long)size, (unsigned long)rates[r], (unsigned long)b, wb);
            cr_assert_leq(fabs((double)o - wo), 1.0 + wo * 1e-15, "size %lu rate %lu: %lu objs, libm %.3f",
                          (unsigned long)size, (unsigned long)rates[r], (unsigned long)o, wo);
        }
}

/* 4M draws at the default rate: the fraction of intervals at or below
 * rate * q is 1 - e^-q (draws are ceilings: the shift is 1 byte in 512
 * KiB); 5 standard deviations of a fraction of 4M is at most 0.00125. */
Test(sample_math, interval_is_exponential, .timeout = 60)
{
    enum { N = 4000000 };
    const uint64_t rate = 512 * 1024;
    struct pl_sampler s;
    pl_sample_init(&s, 4242, rate);
    double qs[] = { 0.01, 0.1, 0.5, M_LN2, 1, 2, 4.605170186 /* ln 100 */, 9.21034037 /* ln 10^4 */ };
    enum { NQ = sizeof qs / sizeof qs[0] };
    uint64_t below[NQ] = { 0 };
    double sum = 0;
    int64_t max = 0;
    for (int i = 0; i < N; i++) {
        int64_t v = pl_sample_next_interval(&s);
        cr_assert(v >= 1);
        sum += (double)v;
        if (v > max)
            max = v;
        for (unsigned q = 0; q < NQ; q++)
            below[q] += (double)v <= (double)rate * qs[q];
    }
    double mean = sum / N;
    cr_expect_lt(fabs(mean / (rate + 0.5) - 1), 0.0025, "mean %.1f, rate %lu", mean, (unsigned long)rate);
    for (unsigned q = 0; q < NQ; q++) {
        double f = (double)below[q] / N, want = -expm1(-qs[q]);
        cr_expect_lt(fabs(f - want), 0.00125, "P(interval <= %.3g rate) = %.5f, want %.5f", qs[q], f, want);
    }
    /* the longest of 4M draws: ln(4M) ~ 15.2 means, and at most 53 ln 2 = 36.7 */
    cr_expect_gt(max, (int64_t)(12.0 * rate));
    cr_expect_leq(max, (int64_t)(36.8 * rate));
}
