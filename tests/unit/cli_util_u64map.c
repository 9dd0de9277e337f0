/* cli_util_u64map.c - the uint64 -> uint64 map on the cli's hash table:
 * every key put is found with its last value (0 and ~0 too), a key never
 * put is not, and growth past the first block keeps them all. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "cli/util/u64map.h"

static uint64_t key_of(uint64_t i)
{
    return i * 0x9e3779b97f4a7c15ull; /* spread, and 0 for i == 0 */
}

Test(cli_u64map, finds_every_key_with_its_last_value)
{
    struct cli_u64map m = { 0 };
    uint64_t v = 7;
    cr_expect_eq(cli_u64map_get(&m, 0, &v), -ENOENT); /* empty */
    cr_expect_eq(v, 7);
    for (uint64_t i = 0; i < 5000; i++)
        cr_assert_eq(cli_u64map_put(&m, key_of(i), i + 1), 0);
    cr_assert_eq(cli_u64map_put(&m, ~0ull, 99), 0);
    for (uint64_t i = 0; i < 5000; i += 2)
        cr_assert_eq(cli_u64map_put(&m, key_of(i), 3 * i), 0); /* overwrite */
    cr_expect_eq(m.n, 5001, "an overwrite added an entry");
    for (uint64_t i = 0; i < 5000; i++) {
        cr_assert_eq(cli_u64map_get(&m, key_of(i), &v), 0, "key %lu lost", (unsigned long)i);
        cr_assert_eq(v, i % 2 ? i + 1 : 3 * i, "key %lu: %lu", (unsigned long)i, (unsigned long)v);
    }
    cr_expect_eq(cli_u64map_get(&m, ~0ull, &v), 0);
    cr_expect_eq(v, 99);
    cr_expect_eq(cli_u64map_get(&m, 12345, &v), -ENOENT);
    cr_expect_eq(cli_u64map_get(&m, key_of(5000), &v), -ENOENT);
    cli_u64map_free(&m);
    cr_expect_eq(m.n, 0);
    cr_expect_null(m.vals);
    cr_expect_eq(cli_u64map_get(&m, key_of(1), &v), -ENOENT); /* freed is empty */
}
