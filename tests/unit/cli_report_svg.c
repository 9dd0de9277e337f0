/* cli_format_svg.c - the SVG flame graph: structure, escaping, script. */
/* Covers: cli/report/svg_script.c */
#include "cli/report/svg.h"
#include "cli/report/svg_script.h"
#include "tests/unit/cli_report_fixture.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(cli_format_svg, frames_and_escaping)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_svg, &p, NULL, &out, &len), 0);
    cr_expect_eq(strncmp(out, "<?xml version=\"1.0\"", 19), 0);
    cr_expect(strstr(out, "<svg version=\"1.1\" width=\"1200\"") != NULL);
    cr_expect(strstr(out, "</svg>\n") == out + len - 7);
    /* Frames: all, main, serve, handle_request, leak_session_buffer,
     * small_alloc, the weird one, libc: 8 (freed_quickly has no live bytes). */
    cr_expect_eq(count(out, "<g class=\"f\""), 8);
    cr_expect_eq(count(out, "data-n=\"main\""), 1, "main merges into one frame");
    cr_expect(strstr(out, "data-n=\"operator;weird &lt;T&gt; 12\"") != NULL);
    cr_expect(strstr(out, "data-n=\"leak_session_buffer\" data-l=\"/src/app.c:42\"") != NULL);
    /* main has one line everywhere; leak is 1000000 of 1004000. */
    cr_expect(strstr(out, "data-v=\"1004000\" data-n=\"main\" data-l=\"/src/app.c:120\"") != NULL);
    cr_expect(strstr(out, "leak_session_buffer (/src/app.c:42)\n1000000 (99.60%)</title>") != NULL);
    cr_expect(strstr(out, "id=\"search\"") != NULL);
    cr_expect(strstr(out, "<![CDATA[") != NULL);
    cr_expect_null(strstr(cli_svg_script, "]]>"));
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_svg, frame_widths_follow_value)
{
    struct cli_profile p;
    struct cli_format_options opt = { .value = "alloc_bytes" };
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_svg, &p, &opt, &out, &len), 0);
    cr_expect(strstr(out, "data-n=\"freed_quickly\"") != NULL);
    cr_expect(strstr(out, "Flame graph: allocated bytes") != NULL);
    /* The root spans the whole width: 1200 - 2 * 10 - 1. */
    cr_expect(strstr(out, "data-n=\"all\" data-l=\"\"><title>all\n2308000 (100.00%)</title>"
                          "<rect x=\"10.00\" y=\"") != NULL, "%.600s", strstr(out, "data-n=\"all\""));
    cr_expect(strstr(out, "width=\"1179.00\"") != NULL);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_svg, empty_profile_still_valid)
{
    struct cli_profile p;
    char *out;
    size_t len;
    memset(&p, 0, sizeof(p));
    cr_assert_eq(fx_write(cli_report_svg, &p, NULL, &out, &len), 0);
    cr_expect(strstr(out, "no live bytes in this profile") != NULL);
    cr_expect(strstr(out, "</svg>\n") != NULL);
    free(out);
}
