/* cli_format_collapsed.c - collapsed stacks: exact lines for the fixture. */
#include "cli/report/collapsed.h"
#include "cli/report/collapsed_names.h"
#include "tests/unit/cli_report_fixture.h"

Test(cli_format_collapsed, live_bytes_lines_root_first)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_collapsed, &p, NULL, &out, &len), 0);
    cr_expect_str_eq(out, "main;serve;handle_request;leak_session_buffer 1000000\n"
                          "main;small_alloc 1000\n"
                          "main;operator:weird <T>_12;libc.so.6+0x29234 3000\n");
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_collapsed, value_choice)
{
    struct cli_profile p;
    struct cli_format_options opt = { .value = "alloc_objects" };
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_collapsed, &p, &opt, &out, &len), 0);
    cr_expect_str_eq(out, "main;serve;handle_request;leak_session_buffer 200\n"
                          "main;small_alloc 50\n"
                          "main;operator:weird <T>_12;libc.so.6+0x29234 3\n"
                          "main;freed_quickly 3000\n");
    free(out);
    opt.value = "bogus";
    cr_expect_eq(fx_write(cli_report_collapsed, &p, &opt, &out, &len), -EINVAL);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_collapsed, unsymbolized_uses_maps_and_drops_payload_pcs)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    for (size_t i = 0; i < p.nstacks; i++)
        cli_stack_clear_frames(&p.stacks[i]);
    cr_assert_eq(fx_write(cli_report_collapsed, &p, NULL, &out, &len), 0);
    /* The PCs start in libheapinject.so: that frame must not show. Offsets
     * are file offsets (address - map start + map offset). */
    cr_expect_str_eq(out, "app+0x1789;app+0x1456;app+0x1123 1000000\n"
                          "app+0x1789;app+0x11a0 1000\n"
                          "app+0x1789;app+0x12b0;libc.so.6+0x29234 3000\n");
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_collapsed, name_cleaning)
{
    struct cli_buf b = { 0 };
    cr_assert_eq(cli_collapsed_add_name(&b, "a;b\nc 123"), 0);
    cr_expect_str_eq(b.data, "a:b c_123");
    b.len = 0;
    cr_assert_eq(cli_collapsed_add_name(&b, "f(int) const"), 0);
    cr_expect_str_eq(b.data, "f(int) const");
    b.len = 0;
    cr_assert_eq(cli_collapsed_add_name(&b, ""), 0);
    cr_expect_str_eq(b.data, "[unknown]");
    free(b.data);
}

/* A frame of Python code (issue 29) is labelled qualname (file:line), the
 * file cut to its base name, a package's __init__.py with its directory. */
Test(cli_format_collapsed, python_frames_are_labelled_with_file_and_line)
{
    char buf[128];
    struct cli_frame f = { .addr = hi_frame_python(3, 24), .function = "Cache.grow", .file = "/srv/app/cache.py",
                           .line = 24, .runtime = HI_FRAME_PYTHON };
    cr_expect_str_eq(cli_collapsed_frame_label(&f, buf, sizeof(buf)), "Cache.grow (cache.py:24)");
    f.file = "/usr/lib/python3.11/json/__init__.py";
    f.line = 0;
    cr_expect_str_eq(cli_collapsed_frame_label(&f, buf, sizeof(buf)), "Cache.grow (json/__init__.py)");
    f.file = "app.py";
    f.line = 7;
    cr_expect_str_eq(cli_collapsed_frame_label(&f, buf, sizeof(buf)), "Cache.grow (app.py:7)");
    struct cli_frame n = { .addr = 0x401000, .function = "leak", .file = "/src/leak.c", .line = 9 };
    cr_expect_str_eq(cli_collapsed_frame_label(&n, buf, sizeof(buf)), "leak"); /* native: as before */
}
