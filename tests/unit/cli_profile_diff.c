/* cli_format_diff.c - what grew between two profiles. */
#include "cli/profile/diff.h"
#include "cli/report/collapsed.h"
#include "tests/unit/cli_report_fixture.h"

/* cur = the fixture; base = the fixture with stack 0 at half its values,
 * stack 1 larger than in cur (it shrank), and stack 2 absent. */
static void make_base(struct cli_profile *b)
{
    fx_profile(b);
    b->stacks[0].live_bytes = 400000;
    b->stacks[0].live_objects = 40;
    b->stacks[0].alloc_bytes = 1000000;
    b->stacks[0].alloc_objects = 100;
    b->stacks[1].live_bytes = 9000;
    b->stacks[1].alloc_bytes = 9000;
    b->stacks[1].alloc_objects = 90;
    b->stacks[1].live_objects = 90;
    b->stacks[3].alloc_bytes = 300000;
    b->stacks[3].alloc_objects = 3000;
    cli_stack_clear_frames(&b->stacks[2]);
    free(b->stacks[2].pcs);
    b->stacks[2] = b->stacks[3];
    b->nstacks = 3;
    b->totals.est_live_bytes = 409000;
    b->duration_s = 1.0;
}

Test(cli_format_diff, by_function_names)
{
    struct cli_profile base, cur, d;
    fx_profile(&cur);
    make_base(&base);
    /* Different addresses for the same functions (another build, ASLR):
     * names still match. */
    for (size_t i = 0; i < base.nstacks; i++)
        for (uint32_t k = 0; k < base.stacks[i].nframes; k++)
            base.stacks[i].frames[k].addr += 0x100000;
    cr_assert_eq(cli_profile_diff(&base, &cur, &d), 0);
    cr_assert_eq(d.nstacks, 2, "leak grew, the weird stack is new; small shrank, freed did not change");
    cr_expect_str_eq(d.stacks[0].frames[0].function, "leak_session_buffer");
    cr_expect_float_eq(d.stacks[0].live_bytes, 600000, 1e-6);
    cr_expect_float_eq(d.stacks[0].live_objects, 60, 1e-6);
    cr_expect_float_eq(d.stacks[0].alloc_bytes, 1000000, 1e-6);
    cr_expect_eq(d.stacks[0].frames[0].addr, PC_LEAK, "frames are cur's");
    cr_expect_float_eq(d.stacks[1].live_bytes, 3000, 1e-6);
    cr_expect_eq(d.totals.est_live_bytes, 1004000 - 409000);
    cr_expect_eq(d.pid, 4242);
    cr_expect_eq(d.nticks, 1, "same session: only ticks after base's snapshot at 1.0 s");
    cr_expect_str_eq(d.maps, FX_MAPS);

    char *out;
    size_t len;
    cr_assert_eq(fx_write(cli_report_collapsed, &d, NULL, &out, &len), 0);
    cr_expect_str_eq(out, "main;serve;handle_request;leak_session_buffer 600000\n"
                          "main;operator:weird <T>_12;libc.so.6+0x29234 3000\n");
    free(out);
    cli_profile_free(&d);
    cli_profile_free(&base);
    cli_profile_free(&cur);
}

Test(cli_format_diff, by_addresses_when_unsymbolized)
{
    struct cli_profile base, cur, d;
    fx_profile(&cur);
    make_base(&base);
    for (size_t i = 0; i < base.nstacks; i++)
        cli_stack_clear_frames(&base.stacks[i]);
    cr_assert_eq(cli_profile_diff(&base, &cur, &d), 0);
    cr_assert_eq(d.nstacks, 2);
    cr_expect_float_eq(d.stacks[0].live_bytes, 600000, 1e-6);
    cr_expect_eq(d.stacks[0].nframes, 4, "cur's frames kept");
    cli_profile_free(&d);
    cli_profile_free(&base);
    cli_profile_free(&cur);
}

Test(cli_format_diff, identical_profiles_give_nothing)
{
    struct cli_profile a, b, d;
    fx_profile(&a);
    fx_profile(&b);
    cr_assert_eq(cli_profile_diff(&a, &b, &d), 0);
    cr_expect_eq(d.nstacks, 0);
    cr_expect_eq(d.totals.est_live_bytes, 0);
    cli_profile_free(&d);
    cli_profile_free(&a);
    cli_profile_free(&b);
}

Test(cli_format_diff, duplicate_keys_are_summed)
{
    struct cli_profile base, cur, d;
    fx_profile(&cur);
    fx_profile(&base);
    /* cur: stack 1 gets the same call path as stack 0 at other PCs. */
    cli_stack_clear_frames(&cur.stacks[1]);
    const struct fx_frame_spec s0[] = {
        { PC_LEAK + 8, "leak_session_buffer", FX_APP, "/src/app.c", 43, false },
        { PC_SERVE + 8, "handle_request", FX_APP, "/src/app.c", 81, true },
        { PC_SERVE + 8, "serve", FX_APP, "/src/app.c", 101, false },
        { PC_MAIN, "main", FX_APP, "/src/app.c", 120, false },
    };
    free(cur.stacks[1].pcs);
    fx_stack(&cur.stacks[1], s0, 4, 500000, 50, 500000, 50);
    cr_assert_eq(cli_profile_diff(&base, &cur, &d), 0);
    /* leak: 1,000,000 + 500,000 - 1,000,000; small_alloc is gone from cur. */
    cr_assert_eq(d.nstacks, 1);
    cr_expect_float_eq(d.stacks[0].live_bytes, 500000, 1e-6);
    cli_profile_free(&d);
    cli_profile_free(&base);
    cli_profile_free(&cur);
}
