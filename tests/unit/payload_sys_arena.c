/* payload_sys_arena.c - our own memory (payload/sys/arena.h): what of it is
 * resident and ours, counted page by page. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "payload/sys/arena.h"

/* Written pages count, reserved ones and ones only read (the shared zero
 * page) do not; runs across the 4,096-page steps of the count included,
 * and runs read together within one pagemap read of 512 entries or just
 * beyond it (1000, 1300, 1511 in one read; 1512 starts the next). Both
 * ways of skipping the holes: PAGEMAP_SCAN and mincore. */
static void written_pages_count(int no_scan)
{
    pl_arena_resident_no_scan(no_scan);
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

Test(arena, resident_bytes_are_the_written_pages)
{
    written_pages_count(0);
}

Test(arena, resident_bytes_without_pagemap_scan)
{
    written_pages_count(1);
}

/* A fork child (a followed worker): the pages it shares with its parent
 * cost it nothing; those it wrote since the fork (copied) count. */
static void child_counts_its_copies(int no_scan)
{
    pl_arena_resident_no_scan(no_scan);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = 4096;
    unsigned char *p = pl_arena_map(pages * pg);
    cr_assert_not_null(p);
    madvise(p, pages * pg, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < 300; i++)
        p[i * 7 * pg] = 1;
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        uint64_t shared = pl_arena_resident_bytes();
        p[0] = 2;       /* a copy */
        p[7 * pg] = 2;  /* a copy */
        p[3 * pg] = 2;  /* a new page */
        uint64_t after = pl_arena_resident_bytes();
        _exit(after - shared == 3 * pg ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child counted its 3 written pages, not the 300 shared");
}

Test(arena, fork_child_counts_only_its_copies)
{
    child_counts_its_copies(0);
}

Test(arena, fork_child_counts_only_its_copies_without_scan)
{
    child_counts_its_copies(1);
}

/* A table every fork child empties is empty in the child from the fork
 * on (no page of it copied); a plain one is the parent's copy; while the
 * census keeps them (its copy reads the tables), both are copied. Exit
 * code of the child: 0 as expected. */
static int child_sees(const unsigned char *empty, const unsigned char *plain, int want_empty)
{
    pid_t c = fork();
    if (c == 0)
        _exit((want_empty ? empty[4096] == 0 : empty[4096] == 7) && plain[4096] == 9 ? 0 : 1);
    int st;
    if (waitpid(c, &st, 0) != c)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(arena, child_empty_tables_are_empty_in_a_fork_child)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *empty = pl_arena_map_child_empty(4 * pg), *plain = pl_arena_map(4 * pg);
    cr_assert(empty && plain);
    empty[4096] = 7;
    plain[4096] = 9;
    cr_expect_eq(child_sees(empty, plain, 1), 0, "the child sees the table empty, the plain one as it was");
    pl_arena_keep_on_fork(true);
    cr_expect_eq(child_sees(empty, plain, 0), 0, "kept for the census's copy: the child sees both as they were");
    pl_arena_keep_on_fork(false);
    cr_expect_eq(child_sees(empty, plain, 1), 0, "emptied again after the census");
    cr_expect_eq(empty[4096], 7, "the parent's own table is untouched");
}
