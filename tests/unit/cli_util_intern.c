/* cli_symbolize_intern.c - the interned string pool: one copy per distinct
 * string, dense ids, exact lengths, strings outliving any one holder, and
 * a pool's growth past its blocks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/intern.h"

Test(cli_intern, the_same_bytes_give_the_same_pointer_and_id)
{
    struct cli_intern *t = cli_intern_new();
    cr_assert_not_null(t);
    char a[] = "malloc_leaf", b[] = "malloc_leaf";
    const char *x = cli_intern_str(t, a), *y = cli_intern_str(t, b);
    cr_assert_not_null(x);
    cr_expect_eq(x, y, "two copies of one string interned twice");
    cr_expect_neq(x, a, "the pool keeps its own copy");
    a[0] = 'X';
    cr_expect_str_eq(x, "malloc_leaf", "changing the caller's buffer changed the pool");
    const char *z = cli_intern_str(t, "malloc_lea");
    cr_expect_neq(z, x, "a prefix is another string");
    cr_expect_str_eq(z, "malloc_lea");
    cr_expect_eq(cli_intern_id(x), 0);
    cr_expect_eq(cli_intern_id(z), 1);
    cr_expect_eq(cli_intern_count(t), 2);
    cr_expect_null(cli_intern_str(t, NULL));
    cr_expect_eq(cli_intern_count(t), 2);
    cli_intern_unref(t);
}

Test(cli_intern, lengths_are_exact_and_empty_is_a_string)
{
    struct cli_intern *t = cli_intern_new();
    const char *e = cli_intern_str(t, "");
    cr_assert_not_null(e);
    cr_expect_str_eq(e, "");
    const char *ab = cli_intern_strn(t, "abc", 2);
    cr_expect_str_eq(ab, "ab");
    cr_expect_eq(cli_intern_str(t, "ab"), ab);
    cr_expect_neq(cli_intern_str(t, "abc"), ab);
    cr_expect_eq(cli_intern_count(t), 3);
    cli_intern_unref(t);
}

Test(cli_intern, many_and_long_strings_keep_their_ids_and_bytes)
{
    struct cli_intern *t = cli_intern_new();
    enum { N = 50000 };
    const char **got = malloc(N * sizeof(*got));
    char buf[64];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "/usr/lib/module_%d.so", i);
        got[i] = cli_intern_str(t, buf);
        cr_assert_not_null(got[i]);
    }
    /* Longer than a block: a block of its own, the pool keeps working. */
    size_t big = 200 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, 'q', big);
    huge[big] = '\0';
    const char *h = cli_intern_str(t, huge);
    cr_assert_not_null(h);
    cr_expect_eq(strlen(h), big);
    cr_expect_eq(cli_intern_str(t, huge), h);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "/usr/lib/module_%d.so", i);
        cr_assert_str_eq(got[i], buf, "string %d moved or changed", i);
        cr_assert_eq(cli_intern_id(got[i]), (uint32_t)i);
        cr_assert_eq(cli_intern_str(t, buf), got[i]);
    }
    cr_expect_eq(cli_intern_id(h), N);
    cr_expect_eq(cli_intern_str(t, "after the big one"), cli_intern_str(t, "after the big one"));
    cr_expect_eq(cli_intern_count(t), N + 2);
    free(huge);
    free(got);
    cli_intern_unref(t);
}

Test(cli_intern, strings_live_until_the_last_reference)
{
    struct cli_intern *t = cli_intern_new();
    const char *s = cli_intern_str(t, "kept");
    struct cli_intern *r = cli_intern_ref(t);
    cr_expect_eq(r, t);
    cli_intern_unref(t);
    /* Run under AddressSanitizer: a freed pool would be a use after free. */
    cr_expect_str_eq(s, "kept");
    cr_expect_eq(cli_intern_str(r, "kept"), s);
    cli_intern_unref(r);
    cr_expect_null(cli_intern_ref(NULL));
    cli_intern_unref(NULL);
}
