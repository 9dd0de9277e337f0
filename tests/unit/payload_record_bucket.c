/* payload_record_bucket.c - the stack table (payload/record/bucket.h): interning,
 * counters, bounds, and 8 threads interning and counting at once. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "payload/record/bucket.h"
#include "payload/record/sample.h"
#include "payload/record/stack.h"

#define NSTACKS 1000
#define NTHREADS 8
#define PER_THREAD 20000

static uintptr_t stacks[NSTACKS][8];

static void setup(void)
{
    cr_assert_eq(pl_bucket_init(), 0);
    pl_bucket_reset();
    for (int i = 0; i < NSTACKS; i++)
        for (int f = 0; f < 8; f++)
            stacks[i][f] = 0x400000u + (uintptr_t)i * 64 + (uintptr_t)f;
}

static int32_t intern(int i, int n)
{
    return pl_bucket_intern(pl_stack_hash(stacks[i], (uint32_t)n), stacks[i], (uint32_t)n, i);
}

Test(bucket, same_stack_same_bucket, .init = setup)
{
    int32_t a = intern(1, 8), b = intern(2, 8), c = intern(1, 8), d = intern(1, 7);
    cr_assert(a >= 0 && b >= 0 && d >= 0);
    cr_expect_eq(a, c);
    cr_expect_neq(a, b);
    cr_expect_neq(a, d); /* a prefix is a different stack */
    cr_expect_eq(pl_bucket_count(), 3);
    const struct pl_bucket *bk = pl_bucket_at((uint32_t)a);
    cr_expect_eq(bk->nframes, 8);
    cr_expect_arr_eq(pl_bucket_frames(bk), stacks[1], sizeof(stacks[1]));
    cr_expect_eq(bk->first_tid, 1);
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        cr_expect_eq(bk->growth[g], -1);
}

Test(bucket, counters_and_growth, .init = setup)
{
    int32_t a = intern(3, 8);
    pl_bucket_add(a, 100, 1000, 10 * PL_OBJ_FP_ONE, 1);
    pl_bucket_add(a, 50, 500, 5 * PL_OBJ_FP_ONE, 0); /* map was full: not live */
    pl_bucket_tick();
    pl_bucket_sub_live(a, 100, 1000, 10 * PL_OBJ_FP_ONE);
    pl_bucket_tick();
    const struct pl_bucket *b = pl_bucket_at((uint32_t)a);
    cr_expect_eq(b->raw_alloc_objs, 2);
    cr_expect_eq(b->raw_alloc_bytes, 150);
    cr_expect_eq(b->est_alloc_bytes, 1500);
    cr_expect_eq(b->est_alloc_objs_fp, 15 * PL_OBJ_FP_ONE);
    cr_expect_eq(b->raw_live_objs, 0);
    cr_expect_eq(b->est_live_bytes, 0);
    cr_expect_eq(b->growth[HI_GROWTH_POINTS - 2], 1000);
    cr_expect_eq(b->growth[HI_GROWTH_POINTS - 1], 0);
    cr_expect_eq(b->growth[0], -1);
}

/* A part of a mapping taken from live (munmap of its middle) and put back
 * (the mremap that would have moved it failed): live is as before, to the
 * byte and the fixed-point object. */
Test(bucket, a_part_put_back_restores_live, .init = setup)
{
    int32_t a = intern(4, 8);
    pl_bucket_add(a, 1 << 20, 8 << 20, 8 * PL_OBJ_FP_ONE, 1);
    pl_bucket_tick();
    pl_bucket_sub_live_part(a, 4096, 32768, 0, PL_OBJ_FP_ONE / 3);
    pl_bucket_tick();
    const struct pl_bucket *b = pl_bucket_at((uint32_t)a);
    cr_expect_eq(b->raw_live_bytes, (1 << 20) - 4096);
    cr_expect_eq(b->est_live_bytes, (8 << 20) - 32768);
    cr_expect_eq(b->est_live_objs_fp, 8 * PL_OBJ_FP_ONE - PL_OBJ_FP_ONE / 3);
    pl_bucket_add_live_part(a, 4096, 32768, 0, PL_OBJ_FP_ONE / 3);
    pl_bucket_tick();
    cr_expect_eq(b->raw_live_bytes, 1 << 20);
    cr_expect_eq(b->raw_live_objs, 1);
    cr_expect_eq(b->est_live_bytes, 8 << 20);
    cr_expect_eq(b->est_live_objs_fp, 8 * PL_OBJ_FP_ONE);
    cr_expect_eq(b->raw_alloc_bytes, 1 << 20);
}

Test(bucket, full_table_drops, .init = setup, .timeout = 30)
{
    uintptr_t pcs[2];
    uint32_t ok = 0;
    for (uint32_t i = 0; i < PL_MAX_BUCKETS + 100; i++) {
        pcs[0] = i;
        pcs[1] = ~(uintptr_t)i;
        if (pl_bucket_intern(pl_stack_hash(pcs, 2), pcs, 2, 0) >= 0)
            ok++;
    }
    cr_expect_eq(ok, PL_MAX_BUCKETS);
    cr_expect_eq(pl_bucket_count(), PL_MAX_BUCKETS);
    pcs[0] = 5; /* existing stacks are still found */
    pcs[1] = ~(uintptr_t)5;
    cr_expect_geq(pl_bucket_intern(pl_stack_hash(pcs, 2), pcs, 2, 0), 0);
}

static void *worker(void *arg)
{
    long t = (long)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        int s = (int)((i * 7 + t * 13) % NSTACKS);
        int32_t b = intern(s, 8);
        if (b < 0)
            return (void *)1;
        pl_bucket_add(b, (uint64_t)s + 1, (uint64_t)s + 1, PL_OBJ_FP_ONE, 1);
        if (i % 2)
            pl_bucket_sub_live(b, (uint64_t)s + 1, (uint64_t)s + 1, PL_OBJ_FP_ONE);
    }
    return NULL;
}

Test(bucket, eight_threads, .init = setup)
{
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NTHREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        cr_assert_null(r);
    }
    cr_assert_eq(pl_bucket_count(), NSTACKS);
    /* expected counts per stack, computed the same way */
    static uint64_t want[NSTACKS], want_live[NSTACKS];
    for (long t = 0; t < NTHREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            int s = (int)((i * 7 + t * 13) % NSTACKS);
            want[s]++;
            if (!(i % 2))
                want_live[s]++;
        }
    uint64_t total = 0;
    for (int s = 0; s < NSTACKS; s++) {
        int32_t b = intern(s, 8);
        const struct pl_bucket *bk = pl_bucket_at((uint32_t)b);
        cr_expect_eq(bk->raw_alloc_objs, want[s], "stack %d", s);
        cr_expect_eq(bk->raw_alloc_bytes, want[s] * (uint64_t)(s + 1));
        cr_expect_eq(bk->raw_live_objs, want_live[s]);
        cr_expect_eq(bk->est_live_objs_fp, want_live[s] * PL_OBJ_FP_ONE);
        total += bk->raw_alloc_objs;
    }
    cr_expect_eq(total, (uint64_t)NTHREADS * PER_THREAD);
}

/* The tick's top risers (issue 30): the buckets whose live bytes rose since
 * the tick before, most first, at most HI_TICK_TOP; a bucket born since
 * then rose from nothing; flat and falling ones are left out. */
Test(bucket, tick_top_risers, .init = setup)
{
    int32_t b[6];
    for (int i = 0; i < 6; i++)
        b[i] = intern(i, 4);
    pl_bucket_add(b[0], 10, 1000, PL_OBJ_FP_ONE, 1);
    pl_bucket_add(b[1], 10, 5000, PL_OBJ_FP_ONE, 1);
    pl_bucket_tick();
    struct hi_tick_top top;
    pl_bucket_tick_top(&top);
    cr_assert_eq(top.ntop, 2);
    cr_expect_eq(top.top[0].bucket, (uint32_t)b[1]);
    cr_expect_eq(top.top[0].grew, 5000);
    cr_expect_eq(top.top[0].live, 5000);
    cr_expect_eq(top.top[1].bucket, (uint32_t)b[0]);

    pl_bucket_sub_live(b[1], 10, 5000, PL_OBJ_FP_ONE);   /* falls */
    for (int i = 2; i < 6; i++)                          /* four rise: 200..500 */
        pl_bucket_add(b[i], 10, 100 * (uint64_t)i, PL_OBJ_FP_ONE, 1);
    pl_bucket_add(b[0], 10, 50, PL_OBJ_FP_ONE, 1);       /* rises least: left out */
    pl_bucket_tick();
    pl_bucket_tick_top(&top);
    cr_assert_eq(top.ntop, HI_TICK_TOP);
    for (unsigned k = 0; k < HI_TICK_TOP; k++) {
        cr_expect_eq(top.top[k].bucket, (uint32_t)b[5 - k], "top %u", k);
        cr_expect_eq(top.top[k].grew, 100 * (5 - (int64_t)k));
    }

    pl_bucket_tick(); /* nothing moved */
    pl_bucket_tick_top(&top);
    cr_expect_eq(top.ntop, 0);
}

/* The risers kept after they stop rising (issue 30): every bucket that was
 * among a tick's top, at most HI_TICK_KEPT, with its live bytes now (a
 * fallen one too); when full, the one longest out of the top makes room;
 * a reset forgets them (their indices are gone). */
Test(bucket, tick_kept_risers, .init = setup)
{
    int32_t b[9];
    for (int i = 0; i < 9; i++)
        b[i] = intern(i, 4);
    struct hi_tick_kept kept;
    pl_bucket_add(b[0], 10, 1000, PL_OBJ_FP_ONE, 1);
    pl_bucket_add(b[1], 10, 5000, PL_OBJ_FP_ONE, 1);
    pl_bucket_tick(); /* tick 1: b1, b0 rise */
    pl_bucket_sub_live(b[1], 10, 5000, PL_OBJ_FP_ONE);
    for (int i = 2; i < 6; i++)
        pl_bucket_add(b[i], 10, 100 * (uint64_t)i, PL_OBJ_FP_ONE, 1);
    pl_bucket_tick(); /* tick 2: b5..b2 rise, b1 falls to 0 */
    pl_bucket_tick_kept(&kept);
    cr_assert_eq(kept.nkept, 6);
    cr_expect_eq(kept.kept[0].bucket, (uint32_t)b[1]);
    cr_expect_eq(kept.kept[0].live, 0, "the fallen riser's live bytes now");
    cr_expect_eq(kept.kept[1].bucket, (uint32_t)b[0]);
    cr_expect_eq(kept.kept[1].live, 1000, "a flat riser");
    pl_bucket_add(b[6], 10, 700, PL_OBJ_FP_ONE, 1);
    pl_bucket_add(b[7], 10, 800, PL_OBJ_FP_ONE, 1);
    pl_bucket_tick(); /* tick 3: full */
    pl_bucket_add(b[8], 10, 900, PL_OBJ_FP_ONE, 1);
    pl_bucket_tick(); /* tick 4: b8 takes b1's place (out of the top since tick 1, first of the two) */
    pl_bucket_tick_kept(&kept);
    cr_assert_eq(kept.nkept, HI_TICK_KEPT);
    bool have[9] = { false };
    for (unsigned k = 0; k < kept.nkept; k++)
        for (int i = 0; i < 9; i++)
            have[i] |= kept.kept[k].bucket == (uint32_t)b[i];
    cr_expect(!have[1], "b1 still kept");
    for (int i = 0; i < 9; i++)
        if (i != 1)
            cr_expect(have[i], "b%d not kept", i);
    pl_bucket_reset();
    pl_bucket_tick_kept(&kept);
    cr_expect_eq(kept.nkept, 0);
}
