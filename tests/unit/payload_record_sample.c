/* payload_record_sample.c - the Poisson sampler: interval distribution and the
 * unbiasedness of the byte and object estimates (payload/record/sample.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "payload/record/sample.h"

Test(sample, mean_interval_within_1_percent)
{
    struct pl_sampler s;
    uint64_t rates[] = { 512 * 1024, 4096, 100 };
    for (unsigned r = 0; r < 3; r++) {
        pl_sample_init(&s, 12345 + r, rates[r]);
        double sum = 0;
        for (int i = 0; i < 1000000; i++) {
            int64_t v = pl_sample_next_interval(&s);
            cr_assert(v >= 1);
            sum += (double)v;
        }
        double mean = sum / 1e6;
        /* ceil() adds 0.5 on average; irrelevant at these rates but exact */
        double expect = (double)rates[r] + 0.5;
        cr_expect(fabs(mean / expect - 1) < 0.01, "rate %lu: mean %.1f", (unsigned long)rates[r], mean);
    }
}

Test(sample, rate_one_samples_everything_with_weight_one)
{
    struct pl_sampler s;
    pl_sample_init(&s, 1, 1);
    for (size_t n = 0; n < 100; n++) {
        cr_assert(pl_sample_step(&s, n));
        s.countdown = pl_sample_next_interval(&s);
        cr_assert_eq(s.countdown, 0);
        uint64_t eb, eo;
        pl_sample_weight(n, 1, &eb, &eo);
        cr_assert_eq(eb, n);
        cr_assert_eq(eo, PL_OBJ_FP_ONE);
    }
}

/* Runs a stream of allocations through the sampler exactly as the hooks
 * do; returns the estimated bytes and objects. */
struct est {
    double bytes, objs, true_bytes, true_objs;
    uint64_t samples;
};

static void account(struct pl_sampler *s, uint64_t n, struct est *e)
{
    e->true_bytes += (double)n;
    e->true_objs += 1;
    if (pl_sample_step(s, n)) {
        uint64_t eb, eo;
        pl_sample_weight(n, s->rate, &eb, &eo);
        e->bytes += (double)eb;
        e->objs += (double)eo / PL_OBJ_FP_ONE;
        e->samples++;
        s->countdown = pl_sample_next_interval(s);
    }
}

/* Objects are checked for fixed-size streams only: in a mixed stream the
 * small blocks are few of the bytes, so few samples stand for most of the
 * objects and their count estimate is legitimately noisy. */
static void check(const char *what, const struct est *e, int objects)
{
    double rb = e->bytes / e->true_bytes, ro = e->objs / e->true_objs;
    cr_log_info("%s: %lu samples, bytes %.4f objects %.4f of truth", what, (unsigned long)e->samples, rb, ro);
    cr_expect(fabs(rb - 1) < 0.03, "%s: bytes estimate %.4f of truth", what, rb);
    if (objects)
        cr_expect(fabs(ro - 1) < 0.03, "%s: objects estimate %.4f of truth", what, ro);
}

static void fixed_stream(uint64_t size, uint64_t total, uint64_t seed)
{
    struct pl_sampler s;
    struct est e = { 0 };
    pl_sample_init(&s, seed, 512 * 1024);
    for (uint64_t done = 0; done < total; done += size)
        account(&s, size, &e);
    char what[64];
    snprintf(what, sizeof(what), "%lu B blocks", (unsigned long)size);
    check(what, &e, 1);
}

/* ~10000 samples each at the default rate: 3% is > 3 standard deviations */
Test(sample, unbiased_16_bytes, .timeout = 60)
{
    fixed_stream(16, 5ull << 30, 7);
}

Test(sample, unbiased_4_kib)
{
    fixed_stream(4096, 5ull << 30, 8);
}

Test(sample, unbiased_1_mib)
{
    fixed_stream(1 << 20, 10000ull << 20, 9);
}

Test(sample, unbiased_mixed_stream, .timeout = 60)
{
    static const uint64_t sizes[] = { 16, 24, 100, 640, 4096, 20000, 65536, 1 << 20 };
    struct pl_sampler s;
    struct est e = { 0 };
    uint64_t x = 88172645463325252ull;
    pl_sample_init(&s, 10, 512 * 1024);
    while (e.true_bytes < (double)(6ull << 30)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        account(&s, sizes[x % 8], &e);
    }
    check("mixed sizes", &e, 0);
}
