/* cli_format_massif.c - massif.out structure (what ms_print checks). */
#include <inttypes.h>

#include "cli/report/massif.h"
#include "tests/unit/cli_report_fixture.h"

Test(cli_format_massif, header_snapshots_and_tree)
{
    struct cli_profile p;
    struct cli_format_options opt = { .command = "./app --serve" };
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_massif, &p, &opt, &out, &len), 0);
    cr_expect_eq(strncmp(out, "desc: ", 6), 0);
    cr_expect(strstr(out, "\ncmd: ./app --serve\ntime_unit: ms\n") != NULL);
    /* Three ticks and the final snapshot; the final one is the largest
     * (1,004,000 B) and is the one peak. */
    cr_expect_eq(fx_count_lines(out, "snapshot="), 4);
    cr_expect_eq(fx_count_lines(out, "#-----------"), 8);
    cr_expect_eq(fx_count_lines(out, "heap_tree=peak"), 1);
    cr_expect_eq(fx_count_lines(out, "heap_tree=empty"), 3);
    cr_expect(strstr(out, "snapshot=3\n#-----------\ntime=2000\nmem_heap_B=1004000\n") != NULL, "%s", out);
    cr_expect(strstr(out, "n2: 1004000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                          " n1: 1000000 0x555555555123: leak_session_buffer (/src/app.c:42)\n"
                          "  n1: 1000000 0x555555555456: handle_request (/src/app.c:80)\n"
                          "   n1: 1000000 0x555555555456: serve (/src/app.c:100)\n"
                          "    n0: 1000000 0x555555555789: main (/src/app.c:120)\n") != NULL, "%s", out);
    /* 3000 + 1000 B of 1,004,000 are below massif's 1% threshold: folded. */
    cr_expect(strstr(out, " n0: 4000 in 2 places, all below massif's threshold (1.00%)\n") != NULL, "%s", out);
    free(out);
    /* A frame without a symbol, once it is big enough to show. */
    p.stacks[2].live_bytes = 500000;
    cr_assert_eq(fx_write(cli_report_massif, &p, &opt, &out, &len), 0);
    cr_expect(strstr(out, " n1: 500000 0x7FFFF7DD1234: ??? (in " FX_LIBC ")\n"
                          "  n1: 500000 0x5555555552B0: operator;weird <T> 12 (in " FX_APP ")\n") != NULL, "%s", out);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_massif, earlier_peak_has_total_only)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    p.ticks[1].live_bytes = 5000000;
    cr_assert_eq(fx_write(cli_report_massif, &p, NULL, &out, &len), 0);
    cr_expect(strstr(out, "\ncmd: pid 4242\n") != NULL);
    cr_expect_eq(fx_count_lines(out, "heap_tree=peak"), 1);
    cr_expect_eq(fx_count_lines(out, "heap_tree=detailed"), 1);
    cr_expect(strstr(out, "mem_heap_B=5000000\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=peak\n"
                          "n0: 5000000 (heap allocation functions)") != NULL, "%s", out);
    free(out);
    cli_profile_free(&p);
}

/* Every node's bytes fit in its snapshot's total and children line counts
 * match, as ms_print requires. */
Test(cli_format_massif, node_counts_consistent)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_massif, &p, NULL, &out, &len), 0);
    const char *tree = strstr(out, "heap_tree=peak\n");
    cr_assert(tree);
    tree = strchr(tree, '\n') + 1;
    /* Walk node lines: "<depth spaces>nK: BYTES ..." */
    int depth_need[256] = { 0 }, top = -1;
    unsigned nodes = 0;
    for (const char *l = tree; *l; l = strchr(l, '\n') + 1) {
        int d = 0;
        while (l[d] == ' ')
            d++;
        unsigned k;
        uint64_t b;
        cr_assert_eq(sscanf(l + d, "n%u: %" SCNu64, &k, &b), 2, "line: %.60s", l);
        cr_expect(b <= 1004000);
        cr_assert(d < 255 && d <= top + 1, "depth jumps from %d to %d", top, d);
        /* This line consumes one child slot of its parent. */
        if (d > 0) {
            cr_assert(depth_need[d - 1] > 0, "extra child at depth %d", d);
            depth_need[d - 1]--;
        }
        cr_expect_eq(depth_need[d], 0, "a sibling at depth %d lacks children", d);
        depth_need[d] = (int)k;
        top = d;
        nodes++;
        if (!strchr(l, '\n'))
            break;
    }
    for (int i = 0; i < 256; i++)
        cr_expect_eq(depth_need[i], 0, "missing children at depth %d", i);
    cr_expect(nodes > 5);
    free(out);
    cli_profile_free(&p);
}
