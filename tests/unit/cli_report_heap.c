/* cli_format_heap.c - gperftools heap text: exact lines, rate handling, and
 * the round trip through the heap reader. */
#include <math.h>

#include "cli/profile/read.h"
#include "cli/report/heap.h"
#include "tests/unit/cli_report_fixture.h"

Test(cli_format_heap, raw_counts_and_maps)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_heap, &p, NULL, &out, &len), 0);
    const char *expect =
        "heap profile:     96:   913200 [   265:  1831000] @ heap_v2/4096\n"
        "    91:   910000 [   182:  1820000] @ 0x0000555555555123 0x0000555555555456 0x0000555555555789\n"
        "     2:      200 [    10:     1000] @ 0x00005555555551a0 0x0000555555555789\n"
        "     3:     3000 [     3:     3000] @ 0x00007ffff7dd1234 0x00005555555552b0 0x0000555555555789\n"
        "     0:        0 [    70:     7000] @ 0x00005555555552f0 0x0000555555555789\n"
        "\nMAPPED_LIBRARIES:\n" FX_MAPS;
    cr_expect_str_eq(out, expect);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_heap, rate_one_is_unsampled)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    p.rate = 1;
    cr_assert_eq(fx_write(cli_report_heap, &p, NULL, &out, &len), 0);
    cr_expect(strstr(out, "] @ heapprofile\n") != NULL, "%s", out);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_heap, derives_raw_counts_when_missing)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    for (size_t i = 0; i < p.nstacks; i++) {
        struct cli_stack *s = &p.stacks[i];
        s->raw_live_bytes = s->raw_live_objects = s->raw_alloc_bytes = s->raw_alloc_objects = 0;
    }
    cr_assert_eq(fx_write(cli_report_heap, &p, NULL, &out, &len), 0);
    /* Stack 0: blocks of 10000 B at rate 4096 are sampled with probability
     * 1 - exp(-10000/4096) = 0.9130: 100 live -> 91 sampled. */
    cr_expect(strstr(out, "\n    91:   910000 [   183:  1830000] @ 0x0000555555555123") != NULL, "%s", out);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_heap, round_trip_through_reader)
{
    struct cli_profile p, q;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    enum cli_profile_kind kind;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_heap, &p, NULL, &out, &len), 0);
    cr_assert_eq(cli_profile_read_mem(out, len, &q, &kind, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(kind, CLI_PROFILE_HEAP);
    cr_expect_eq(q.rate, 4096);
    cr_assert_eq(q.nstacks, 4);
    cr_expect_eq(q.stacks[0].npcs, 3);
    cr_expect_eq(q.stacks[0].pcs[0], PC_LEAK);
    cr_expect_eq(q.stacks[0].pcs[2], PC_MAIN);
    cr_expect_eq(q.stacks[0].nframes, 0);
    cr_expect_eq(q.stacks[0].raw_live_objects, 91);
    cr_expect_eq(q.stacks[3].raw_alloc_bytes, 7000);
    /* Unbiased as pprof does it: 91 * 1/(1-exp(-10000/4096)) = 99.67. */
    cr_expect(fabs(q.stacks[0].live_objects - 91 / -expm1(-10000.0 / 4096)) < 1e-6);
    cr_expect_eq(q.maps_len, strlen(FX_MAPS));
    cr_expect(!memcmp(q.maps, FX_MAPS, q.maps_len));
    free(out);
    cli_profile_free(&p);
    cli_profile_free(&q);
}
