/* cli_target_snapnodes.c - stack nodes as the cli receives them
 * (cli/link/snapnodes.h): records split anywhere between nodes rebuild
 * every stack; a hostile peer's nodes (parent not sent yet, too deep, too
 * many, a ragged record) and stacks (node not sent, wrong depth) are
 * refused with a reason and leave the table as it was. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/link/snapnodes.h"
#include "common/proto.h"

static char why[256];

static void node(uint8_t *buf, size_t i, uint32_t parent, uint64_t pc)
{
    struct hi_snap_node n = { pc, parent };
    memcpy(buf + i * sizeof(n), &n, sizeof(n));
}

Test(snapnodes, records_split_anywhere_rebuild_the_stacks)
{
    /* Nodes of 3 stacks, as an agent sends them (outermost first):
     *   1 main  2 run(1)  3 leaf_a(2)  4 mid(2)  5 leaf_b(4)  6 other(1) */
    static const uint32_t parent[6] = { 0, 1, 2, 2, 4, 1 };
    static const uint64_t pc[6] = { 0x100, 0x200, 0x300, 0x400, 0x500, 0x600 };
    uint8_t body[6 * sizeof(struct hi_snap_node)];
    for (size_t i = 0; i < 6; i++)
        node(body, i, parent[i], pc[i]);
    struct cli_snapnodes t = { 0 };
    const size_t sz = sizeof(struct hi_snap_node);
    cr_assert_eq(cli_snapnodes_add(&t, body, (uint32_t)(2 * sz), why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(cli_snapnodes_add(&t, body + 2 * sz, (uint32_t)sz, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(cli_snapnodes_add(&t, body + 3 * sz, (uint32_t)(3 * sz), why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(t.n, 6);
    uint64_t *pcs;
    cr_assert_eq(cli_snapnodes_stack(&t, 5, 4, &pcs, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(pcs[0], 0x500);
    cr_expect_eq(pcs[1], 0x400);
    cr_expect_eq(pcs[2], 0x200);
    cr_expect_eq(pcs[3], 0x100);
    free(pcs);
    cr_assert_eq(cli_snapnodes_stack(&t, 3, 3, &pcs, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(pcs[0], 0x300);
    cr_expect_eq(pcs[2], 0x100);
    free(pcs);
    cr_assert_eq(cli_snapnodes_stack(&t, 0, 0, &pcs, why, sizeof(why)), 0, "%s", why);
    cr_expect_null(pcs);
    cli_snapnodes_free(&t);
}

Test(snapnodes, hostile_nodes_are_refused_and_nothing_is_taken)
{
    struct cli_snapnodes t = { 0 };
    uint8_t body[4 * sizeof(struct hi_snap_node)];
    const uint32_t sz = sizeof(struct hi_snap_node);
    node(body, 0, 0, 0x10);
    cr_assert_eq(cli_snapnodes_add(&t, body, sz, why, sizeof(why)), 0);
    /* ragged and empty records */
    cr_expect_eq(cli_snapnodes_add(&t, body, sz - 1, why, sizeof(why)), -EPROTO);
    cr_expect(strstr(why, "whole number") != NULL, "%s", why);
    cr_expect_eq(cli_snapnodes_add(&t, body, sz + 5, why, sizeof(why)), -EPROTO);
    cr_expect_eq(cli_snapnodes_add(&t, body, 0, why, sizeof(why)), -EPROTO);
    /* a parent not sent before: itself, the future; the good node first
     * in the same record is not taken either */
    node(body, 0, 1, 0x20);
    node(body, 1, 3, 0x30);
    cr_expect_eq(cli_snapnodes_add(&t, body, 2 * sz, why, sizeof(why)), -EPROTO);
    cr_expect(strstr(why, "not sent before") != NULL, "%s", why);
    node(body, 0, 2, 0x20);
    cr_expect_eq(cli_snapnodes_add(&t, body, sz, why, sizeof(why)), -EPROTO);
    node(body, 0, UINT32_MAX, 0x20);
    cr_expect_eq(cli_snapnodes_add(&t, body, sz, why, sizeof(why)), -EPROTO);
    cr_expect_eq(t.n, 1, "a refused record left nodes behind");
    cli_snapnodes_free(&t);
}

Test(snapnodes, a_chain_deeper_than_a_stack_is_refused)
{
    struct cli_snapnodes t = { 0 };
    uint8_t body[(HI_MAX_FRAMES + 1) * sizeof(struct hi_snap_node)];
    for (uint32_t i = 0; i <= HI_MAX_FRAMES; i++)
        node(body, i, i, 0x1000 + i); /* node i+1's parent is node i */
    const uint32_t sz = sizeof(struct hi_snap_node);
    cr_expect_eq(cli_snapnodes_add(&t, body, HI_MAX_FRAMES * sz, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(t.depth[HI_MAX_FRAMES], HI_MAX_FRAMES);
    cr_expect_eq(cli_snapnodes_add(&t, body + HI_MAX_FRAMES * sz, sz, why, sizeof(why)), -EPROTO);
    cr_expect(strstr(why, "deeper than") != NULL, "%s", why);
    uint64_t *pcs;
    cr_assert_eq(cli_snapnodes_stack(&t, HI_MAX_FRAMES, HI_MAX_FRAMES, &pcs, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(pcs[0], 0x1000 + HI_MAX_FRAMES - 1);
    cr_expect_eq(pcs[HI_MAX_FRAMES - 1], 0x1000);
    free(pcs);
    cli_snapnodes_free(&t);
}

Test(snapnodes, stacks_naming_unsent_nodes_or_another_depth_are_refused)
{
    struct cli_snapnodes t = { 0 };
    uint8_t body[2 * sizeof(struct hi_snap_node)];
    node(body, 0, 0, 0x10);
    node(body, 1, 1, 0x20);
    cr_assert_eq(cli_snapnodes_add(&t, body, sizeof(body), why, sizeof(why)), 0);
    uint64_t *pcs = (uint64_t *)1;
    cr_expect_eq(cli_snapnodes_stack(&t, 3, 1, &pcs, why, sizeof(why)), -EPROTO);
    cr_expect(strstr(why, "not sent") != NULL, "%s", why);
    cr_expect_null(pcs);
    cr_expect_eq(cli_snapnodes_stack(&t, UINT32_MAX, 1, &pcs, why, sizeof(why)), -EPROTO);
    cr_expect_eq(cli_snapnodes_stack(&t, 2, 1, &pcs, why, sizeof(why)), -EPROTO);
    cr_expect(strstr(why, "has 2") != NULL, "%s", why);
    cr_expect_eq(cli_snapnodes_stack(&t, 2, 3, &pcs, why, sizeof(why)), -EPROTO);
    cr_expect_eq(cli_snapnodes_stack(&t, 0, 1, &pcs, why, sizeof(why)), -EPROTO);
    cli_snapnodes_free(&t);
}

Test(snapnodes, more_nodes_than_the_bound_are_refused, .timeout = 60)
{
    struct cli_snapnodes t = { 0 };
    enum { PER = 5000 };
    uint8_t *body = malloc(PER * sizeof(struct hi_snap_node));
    for (uint32_t i = 0; i < PER; i++)
        node(body, i, 0, 0x1000 + i);
    const uint32_t len = PER * sizeof(struct hi_snap_node);
    int rc = 0;
    while ((rc = cli_snapnodes_add(&t, body, len, why, sizeof(why))) == 0)
        cr_assert_leq(t.n, CLI_SNAPNODES_MAX);
    cr_expect_eq(rc, -EPROTO);
    cr_expect(strstr(why, "the bound") != NULL, "%s", why);
    cr_expect_leq(t.n, CLI_SNAPNODES_MAX);
    cr_expect_gt(t.n + PER, CLI_SNAPNODES_MAX);
    free(body);
    cli_snapnodes_free(&t);
}
