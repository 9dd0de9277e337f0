/* cli_util_buf.c - the growable byte buffer the writers build output in:
 * appends keep every byte and a NUL after them across growth, and writing
 * to a stream that refuses the bytes is an error, not silence. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/buf.h"

Test(cli_buf, appends_keep_every_byte_across_growth)
{
    struct cli_buf b = { 0 };
    cr_assert_eq(cli_buf_add(&b, "ab\0c", 4), 0); /* a NUL inside is data */
    cr_expect_eq(b.len, 4);
    cr_expect_eq(memcmp(b.data, "ab\0c", 5), 0); /* and a NUL after */
    cr_assert_eq(cli_buf_addc(&b, 'x'), 0);
    cr_assert_eq(cli_buf_addf(&b, "[%d:%s]", 42, "y"), 0);
    cr_expect_eq(b.len, 11);
    cr_expect_eq(memcmp(b.data + 4, "x[42:y]", 8), 0);
    for (int i = 0; i < 3000; i++) /* past the first 4096-byte block, many times */
        cr_assert_eq(cli_buf_addf(&b, "%04d,", i), 0);
    cr_expect_eq(b.len, 11 + 3000 * 5);
    cr_expect_eq(b.data[b.len], '\0');
    cr_expect_geq(b.cap, b.len + 1);
    cr_expect_eq(memcmp(b.data + 11, "0000,0001,", 10), 0);
    cr_expect_eq(memcmp(b.data + b.len - 5, "2999,", 5), 0);
    free(b.data);
}

Test(cli_buf, write_all_reports_a_refused_write)
{
    char *mem = NULL;
    size_t memlen = 0;
    FILE *out = open_memstream(&mem, &memlen);
    cr_assert_not_null(out);
    cr_expect_eq(cli_buf_write_all(out, "hello", 5), 0);
    cr_expect_eq(cli_buf_write_all(out, NULL, 0), 0);
    fclose(out);
    cr_expect_eq(memlen, 5);
    cr_expect_eq(memcmp(mem, "hello", 5), 0);
    free(mem);

    FILE *ro = fopen("/dev/null", "r"); /* a stream that takes no bytes */
    cr_assert_not_null(ro);
    cr_expect_eq(cli_buf_write_all(ro, "hello", 5), -EIO);
    fclose(ro);
}
