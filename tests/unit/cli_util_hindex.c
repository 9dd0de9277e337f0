/* cli_hindex.c - the cli's one hash table. */
#include <criterion/criterion.h>
#include <string.h>

#include "cli/util/hindex.h"

static const char *names[] = { "alpha", "beta", "gamma", "delta" };

static bool same_name(size_t entry, const void *ctx)
{
    return !strcmp(names[entry], ctx);
}

Test(cli_hindex, colliding_hashes_stay_separate_entries)
{
    struct cli_hindex ix = { 0 };
    /* every key under one hash: only the comparison tells them apart */
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(cli_hindex_add(&ix, 42, i), 0);
    for (size_t i = 0; i < 4; i++)
        cr_expect_eq(cli_hindex_find(&ix, 42, same_name, names[i]), (long)i);
    cr_expect_eq(cli_hindex_find(&ix, 42, same_name, "epsilon"), -1);
    cr_expect_eq(cli_hindex_find(&ix, 43, same_name, "alpha"), -1);
    cli_hindex_free(&ix);
}

Test(cli_hindex, value_keys_through_growth)
{
    struct cli_hindex ix = { 0 };
    cr_expect_eq(cli_hindex_find(&ix, 0, NULL, NULL), -1); /* empty: nothing */
    for (size_t i = 0; i < 100000; i++)
        cr_assert_eq(cli_hindex_add(&ix, 0x7f0000000000ull + i * 16, i), 0);
    for (size_t i = 0; i < 100000; i += 997)
        cr_expect_eq(cli_hindex_find(&ix, 0x7f0000000000ull + i * 16, NULL, NULL), (long)i);
    cr_expect_eq(cli_hindex_find(&ix, 0x7f0000000008ull, NULL, NULL), -1);
    cr_expect_leq(ix.n * 2, ix.nslots);
    cli_hindex_free(&ix);
    cr_expect_eq(ix.nslots, 0);
}

Test(cli_hindex, string_hash_is_stable_and_seeded)
{
    cr_expect_eq(cli_hindex_hash_bytes("main", 4, 0), cli_hindex_hash_bytes("main", 4, 0));
    cr_expect_neq(cli_hindex_hash_bytes("main", 4, 0), cli_hindex_hash_bytes("main", 4, 7));
    cr_expect_neq(cli_hindex_hash_bytes("main", 4, 0), cli_hindex_hash_bytes("mian", 4, 0));
}
