/* payload_sys_arena.c - our own memory (payload/sys/arena.h): what of it is
 * resident and ours, counted page by page. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/sys/arena.h"

/* Written pages count, reserved ones and ones only read (the shared zero
 * page) do not; runs across the 4,096-page steps of the count included,
 * and runs read together within one pagemap read of 512 entries or just
 * beyond it (1000, 1300, 1511 in one read; 1512 starts the next). */
Test(arena, resident_bytes_are_the_written_pages)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = 20000;
    uint64_t before = pl_arena_resident_bytes();
    unsigned char *p = pl_arena_map(pages * pg);
    cr_assert_not_null(p);
    /* One page per page written: no transparent huge page behind them. */
    madvise(p, pages * pg, MADV_NOHUGEPAGE);
    cr_expect_eq(pl_arena_resident_bytes(), before, "a reservation alone counts nothing");
    static const size_t written[] = { 0, 10, 11, 12, 13, 14, 1000, 1300, 1511, 1512, 4095, 4096, 4097, 5000, 8191, 8192, 19999 };
    size_t n = sizeof(written) / sizeof(written[0]);
    for (size_t i = 0; i < n; i++)
        p[written[i] * pg] = 1;
    volatile unsigned sum = 0;
    for (size_t i = 100; i < 200; i++)
        sum += p[i * pg];
    cr_expect_eq(sum, 0);
    cr_expect_eq(pl_arena_resident_bytes(), before + n * pg, "%zu pages written",  n);
}
