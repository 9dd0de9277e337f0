/* payload_interpose_allocstats.c - the allocator's own figures and trim, read in this
 * very process (glibc's malloc, no family patched: the first module that
 * defines malloc is found). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "payload/interpose/allocstats.h"

Test(payload_allocstats, glibc_figures_follow_what_is_allocated)
{
    struct hi_alloc_stats a, b;
    pl_allocstats_read(&a);
    cr_assert_eq(a.status, 0, "%s", a.why);
    cr_expect_eq(a.allocator, HI_ALLOC_GLIBC);
    cr_expect(a.fields & HI_AF_IN_USE);
    cr_expect_neq(a.module_base, 0);
    /* 64 blocks of 64 KiB: below the mmap threshold, in the arena. */
    void *p[64];
    for (int i = 0; i < 64; i++) {
        p[i] = malloc(65536);
        memset(p[i], 1, 65536);
    }
    pl_allocstats_read(&b);
    cr_expect_geq(b.in_use, a.in_use + 64 * 65536, "%lu -> %lu", (unsigned long)a.in_use, (unsigned long)b.in_use);
    for (int i = 0; i < 64; i++)
        free(p[i]);
    pl_allocstats_read(&b);
    cr_expect_lt(b.in_use, a.in_use + 65536);
}

Test(payload_allocstats, glibc_trim_is_malloc_trim)
{
    struct hi_trim_done t;
    pl_allocstats_trim(&t);
    cr_expect_eq(t.status, 0, "%s", t.why);
    cr_expect_eq(t.allocator, HI_ALLOC_GLIBC);
    cr_expect_str_eq(t.how, "malloc_trim(0)");
}
