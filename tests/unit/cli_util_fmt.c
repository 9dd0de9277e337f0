/* cli_util_fmt.c - the numbers and names a user reads in messages and text
 * reports: bytes in binary units, counts, durations, singular or plural,
 * and strings from the target made harmless for a terminal. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cli/util/fmt.h"

Test(cli_fmt, bytes_in_binary_units)
{
    char b[32];
    cr_expect_str_eq(cli_fmt_bytes(0, b, sizeof(b)), "0 B");
    cr_expect_str_eq(cli_fmt_bytes(512, b, sizeof(b)), "512 B");
    cr_expect_str_eq(cli_fmt_bytes(1023, b, sizeof(b)), "1023 B");
    cr_expect_str_eq(cli_fmt_bytes(1024, b, sizeof(b)), "1.0 KiB");
    cr_expect_str_eq(cli_fmt_bytes(1536, b, sizeof(b)), "1.5 KiB");
    cr_expect_str_eq(cli_fmt_bytes(100 * 1024, b, sizeof(b)), "100 KiB"); /* no decimal from 100 up */
    cr_expect_str_eq(cli_fmt_bytes(12.3 * 1048576, b, sizeof(b)), "12.3 MiB");
    cr_expect_str_eq(cli_fmt_bytes(300.0 * 1048576, b, sizeof(b)), "300 MiB");
    cr_expect_str_eq(cli_fmt_bytes(3.0 * 1073741824.0, b, sizeof(b)), "3.0 GiB");
    cr_expect_str_eq(cli_fmt_bytes(-2048, b, sizeof(b)), "-2.0 KiB"); /* a diff's shrink */
    cr_expect_str_eq(cli_fmt_bytes(2048.0 * 1125899906842624.0, b, sizeof(b)), "2048 PiB"); /* no unit past PiB */
}

Test(cli_fmt, counts_in_thousands)
{
    char b[32];
    cr_expect_str_eq(cli_fmt_count(0, b, sizeof(b)), "0");
    cr_expect_str_eq(cli_fmt_count(999, b, sizeof(b)), "999");
    cr_expect_str_eq(cli_fmt_count(1200, b, sizeof(b)), "1.2k");
    cr_expect_str_eq(cli_fmt_count(150000, b, sizeof(b)), "150k");
    cr_expect_str_eq(cli_fmt_count(3.4e6, b, sizeof(b)), "3.4M");
    cr_expect_str_eq(cli_fmt_count(1234567, b, sizeof(b)), "1.2M");
    cr_expect_str_eq(cli_fmt_count(-5000, b, sizeof(b)), "-5.0k");
}

Test(cli_fmt, durations)
{
    char b[32];
    cr_expect_str_eq(cli_fmt_duration(0.5, b, sizeof(b)), "0.5 s");
    cr_expect_str_eq(cli_fmt_duration(12, b, sizeof(b)), "12 s");
    cr_expect_str_eq(cli_fmt_duration(185, b, sizeof(b)), "3 min 5 s");
    cr_expect_str_eq(cli_fmt_duration(7260, b, sizeof(b)), "2 h 1 min");
    cr_expect_str_eq(cli_fmt_duration(-3, b, sizeof(b)), "0.0 s");
    cr_expect_str_eq(cli_fmt_duration(NAN, b, sizeof(b)), "0.0 s");
    cr_expect_str_eq(cli_fmt_duration(1e300, b, sizeof(b)), "277777777 h 46 min"); /* capped, no int overflow */
}

Test(cli_fmt, noun_follows_the_count_as_printed)
{
    cr_expect_str_eq(cli_fmt_noun(1, "call", "calls"), "call");
    cr_expect_str_eq(cli_fmt_noun(0.6, "call", "calls"), "call"); /* prints as "1" */
    cr_expect_str_eq(cli_fmt_noun(1.49, "call", "calls"), "call");
    cr_expect_str_eq(cli_fmt_noun(1.5, "call", "calls"), "calls");
    cr_expect_str_eq(cli_fmt_noun(0, "call", "calls"), "calls");
    cr_expect_str_eq(cli_fmt_noun(0.4, "call", "calls"), "calls");
    cr_expect_str_eq(cli_fmt_noun(2, "call", "calls"), "calls");
}

Test(cli_fmt, printable_escapes_controls_and_backslash)
{
    char b[64];
    cr_expect_str_eq(cli_fmt_printable("/usr/lib/libc.so.6", b, sizeof(b)), "/usr/lib/libc.so.6");
    cr_expect_str_eq(cli_fmt_printable("a\x1b]0;pwned\x07z", b, sizeof(b)), "a\\x1b]0;pwned\\x07z");
    cr_expect_str_eq(cli_fmt_printable("tab\there\nDEL\x7f", b, sizeof(b)), "tab\\x09here\\x0aDEL\\x7f");
    cr_expect_str_eq(cli_fmt_printable("C:\\x", b, sizeof(b)), "C:\\\\x");
    cr_expect_str_eq(cli_fmt_printable("caf\xc3\xa9", b, sizeof(b)), "caf\xc3\xa9"); /* UTF-8 kept */
}

Test(cli_fmt, printable_truncates_whole_escapes_only)
{
    char b[6];
    memset(b, 'Q', sizeof(b));
    cr_expect_str_eq(cli_fmt_printable("ab\x01zz", b, sizeof(b)), "ab"); /* "\x01" would not fit */
    cr_expect_str_eq(cli_fmt_printable("abcdefgh", b, sizeof(b)), "abcde");
    cr_expect_str_eq(cli_fmt_printable("abcd\\", b, sizeof(b)), "abcd"); /* "\\\\" would not fit */
    char one[1] = { 'Q' };
    cr_expect_str_eq(cli_fmt_printable("abc", one, 1), "");
}
