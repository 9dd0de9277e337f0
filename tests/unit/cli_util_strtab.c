/* cli_util_strtab.c - a writer's string table on the cli's one interner. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli/util/intern.h"
#include "cli/util/strtab.h"

Test(cli_strtab, dense_indexes_in_order_of_first_sight)
{
    struct cli_strtab t = { 0 };
    cr_expect_eq(cli_strtab_intern(&t, ""), 0);
    cr_expect_eq(cli_strtab_intern(&t, "malloc"), 1);
    cr_expect_eq(cli_strtab_intern(&t, "main"), 2);
    cr_expect_eq(cli_strtab_intern(&t, "malloc"), 1);
    cr_expect_eq(cli_strtab_intern(&t, NULL), 0);                /* NULL is "" */
    cr_expect_eq(cli_strtab_intern_len(&t, "main.c", 4), 2);     /* "main" */
    cr_assert_eq(t.n, 3);
    cr_expect_str_eq(t.strs[0], "");
    cr_expect_str_eq(t.strs[1], "malloc");
    cr_expect_str_eq(t.strs[2], "main");
    cr_expect_eq(cli_intern_id(t.strs[2]), 2); /* the pool's own id */
    cli_strtab_free(&t);
    cr_expect_eq(t.n, 0);
    cr_expect_null(t.strs);
}

Test(cli_strtab, many_strings_stay_where_they_were)
{
    struct cli_strtab t = { 0 };
    char buf[32];
    const char *first[2000];
    for (int i = 0; i < 2000; i++) { /* past the first growth of the array */
        snprintf(buf, sizeof(buf), "frame_%d", i);
        cr_assert_eq(cli_strtab_intern(&t, buf), i);
        first[i] = t.strs[i];
    }
    for (int i = 0; i < 2000; i += 7) {
        snprintf(buf, sizeof(buf), "frame_%d", i);
        cr_expect_eq(cli_strtab_intern(&t, buf), i);
        cr_expect_eq(t.strs[i], first[i]); /* the same bytes, never moved */
        cr_expect_str_eq(t.strs[i], buf);
    }
    cli_strtab_free(&t);
}

Test(cli_strtab, two_tables_number_on_their_own)
{
    struct cli_strtab a = { 0 }, b = { 0 };
    cr_expect_eq(cli_strtab_intern(&a, "x"), 0);
    cr_expect_eq(cli_strtab_intern(&a, "y"), 1);
    cr_expect_eq(cli_strtab_intern(&b, "y"), 0);
    cli_strtab_free(&a);
    cr_expect_str_eq(b.strs[0], "y"); /* b's strings are b's */
    cli_strtab_free(&b);
}
