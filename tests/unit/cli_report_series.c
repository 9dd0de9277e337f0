/* cli_format_series.c - the ticks CSV. */
#include "cli/report/series.h"
#include "tests/unit/cli_report_fixture.h"

Test(cli_format_series, ticks_then_snapshot_row)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_series, &p, NULL, &out, &len), 0);
    cr_expect_str_eq(out, "t_s,live_bytes,alloc_bytes,rss_bytes\n"
                          "0.500,400000,800000,10485760\n"
                          "1.000,900000,1600000,11534336\n"
                          "1.500,990000,2000000,12582912\n"
                          "2.000,1004000,2308000,12582912\n");
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_series, no_repeated_time)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    p.duration_s = 1.5004; /* prints as 1.500 like the last tick */
    cr_assert_eq(fx_write(cli_report_series, &p, NULL, &out, &len), 0);
    cr_expect_eq(fx_count_lines(out, ""), 4);
    cr_expect_eq(fx_count_lines(out, "1.500,"), 1);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_series, empty_profile_has_header)
{
    struct cli_profile p;
    char *out;
    size_t len;
    memset(&p, 0, sizeof(p));
    cr_assert_eq(fx_write(cli_report_series, &p, NULL, &out, &len), 0);
    cr_expect_str_eq(out, "t_s,live_bytes,alloc_bytes,rss_bytes\n");
    free(out);
}
