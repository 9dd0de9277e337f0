/* cli_util_parse.c - byte counts and durations as the user types them
 * (--rate, --min-size, --duration, --interval): suffixes, case, and every
 * form that must be refused rather than read as something else. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "cli/util/parse.h"

static uint64_t size_of(const char *s)
{
    uint64_t v = 12345;
    cr_assert_eq(cli_parse_size(s, &v), 0, "\"%s\" refused", s);
    return v;
}

static void size_refused(const char *s)
{
    uint64_t v = 12345;
    cr_expect_eq(cli_parse_size(s, &v), -EINVAL, "\"%s\" accepted", s);
    cr_expect_eq(v, 12345, "\"%s\" wrote the result", s);
}

Test(cli_parse_size, suffixes_are_powers_of_1024)
{
    cr_expect_eq(size_of("0"), 0);
    cr_expect_eq(size_of("4096"), 4096);
    cr_expect_eq(size_of("12b"), 12);
    cr_expect_eq(size_of("12B"), 12);
    cr_expect_eq(size_of("64K"), 65536);
    cr_expect_eq(size_of("64k"), 65536);
    cr_expect_eq(size_of("64KiB"), 65536);
    cr_expect_eq(size_of("64kb"), 65536);
    cr_expect_eq(size_of("512K"), 524288);
    cr_expect_eq(size_of("3M"), 3u << 20);
    cr_expect_eq(size_of("2MiB"), 2u << 20);
    cr_expect_eq(size_of("100B"), 100);
    cr_expect_eq(size_of("1g"), 1u << 30);
    cr_expect_eq(size_of("2G"), 2ull << 30);
    cr_expect_eq(size_of("1T"), 1ull << 40);
    cr_expect_eq(size_of("16777215T"), 16777215ull << 40); /* the largest that fits */
}

Test(cli_parse_size, refuses_what_it_cannot_read_exactly)
{
    size_refused(NULL);
    size_refused("");
    size_refused("K");
    size_refused("-1");
    size_refused(" 1");
    size_refused("+1");
    size_refused("1 K");
    size_refused("1x");
    size_refused("1KK");
    size_refused("1Kx");
    size_refused("1P");
    size_refused("1.5M");
    size_refused("16777216T");            /* overflows 64 bits once shifted */
    size_refused("18446744073709551616"); /* overflows before any suffix */
}

static double duration_of(const char *s)
{
    double v = -1;
    cr_assert_eq(cli_parse_duration(s, &v), 0, "\"%s\" refused", s);
    return v;
}

static void duration_refused(const char *s)
{
    double v = 42;
    cr_expect_eq(cli_parse_duration(s, &v), -EINVAL, "\"%s\" accepted", s);
    cr_expect_eq(v, 42, "\"%s\" wrote the result", s);
}

Test(cli_parse_duration, seconds_by_default_and_each_suffix)
{
    cr_expect_float_eq(duration_of("0"), 0, 1e-12);
    cr_expect_float_eq(duration_of("1.5"), 1.5, 1e-12);
    cr_expect_float_eq(duration_of(".5s"), 0.5, 1e-12);
    cr_expect_float_eq(duration_of("10s"), 10, 1e-12);
    cr_expect_float_eq(duration_of("250ms"), 0.25, 1e-12);
    cr_expect_float_eq(duration_of("2m"), 120, 1e-12);
    cr_expect_float_eq(duration_of("2min"), 120, 1e-12);
    cr_expect_float_eq(duration_of("1.5h"), 5400, 1e-9);
}

Test(cli_parse_duration, refuses_negative_infinite_and_unknown_units)
{
    duration_refused(NULL);
    duration_refused("");
    duration_refused("-1");
    duration_refused("inf");
    duration_refused("nan");
    duration_refused("1e400"); /* out of range */
    duration_refused("1d");
    duration_refused("1 s");
    duration_refused("1sec");
    duration_refused("1m30s");
    duration_refused("s");
}
