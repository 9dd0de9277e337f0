/* payload_serve_stacknodes.c - the agent's stack nodes (payload/serve/stacknodes.h):
 * stacks sharing outer frames share nodes, each node is emitted once and
 * before any stack that names it, the emitted nodes rebuild every stack,
 * a full table says so instead of growing, and a new snapshot starts
 * from node 1 again. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "payload/serve/stacknodes.h"

/* What the cli sees: nodes in emit order (id = index + 1). */
static uint64_t got_pc[1 << 20];
static uint32_t got_parent[1 << 20];
static uint32_t ngot;

static int record(void *ctx, uint32_t id, uint32_t parent, uint64_t pc)
{
    (void)ctx;
    cr_assert_eq(id, ngot + 1, "node ids are not dense in emit order");
    cr_assert_lt(parent, id, "node %u emitted before its parent %u", id, parent);
    got_pc[ngot] = pc;
    got_parent[ngot] = parent;
    ngot++;
    return 0;
}

/* The stack of node id, innermost first, from the emitted nodes alone. */
static uint32_t rebuild(uint32_t id, uint64_t *out)
{
    uint32_t n = 0;
    for (; id; id = got_parent[id - 1])
        out[n++] = got_pc[id - 1];
    return n;
}

static void setup(void)
{
    cr_assert_eq(pl_stacknodes_init(), 0);
    pl_stacknodes_end();
    ngot = 0;
}

Test(stacknodes, shared_outer_frames_share_nodes, .init = setup)
{
    /* innermost first: a and b share their two outer frames (main, run) */
    uintptr_t a[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };
    uintptr_t b[4] = { 0x1111, 0x2222, 0x3000, 0x4000 };
    pl_stacknodes_begin(8);
    uint32_t na, nb, na2;
    cr_assert_eq(pl_stacknodes_path(a, 4, &na, record, NULL), 0);
    cr_expect_eq(ngot, 4);
    cr_assert_eq(pl_stacknodes_path(b, 4, &nb, record, NULL), 0);
    cr_expect_eq(ngot, 6, "b should add only its 2 inner frames, added %u", ngot - 4);
    cr_assert_eq(pl_stacknodes_path(a, 4, &na2, record, NULL), 0);
    cr_expect_eq(na2, na, "the same stack twice, two nodes");
    cr_expect_eq(ngot, 6);
    uint64_t out[8];
    cr_assert_eq(rebuild(na, out), 4);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(out[i], a[i]);
    cr_assert_eq(rebuild(nb, out), 4);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(out[i], b[i]);
    /* A suffix of a is a node of its own already; no frames is node 0. */
    uint32_t ns, n0;
    cr_assert_eq(pl_stacknodes_path(a + 2, 2, &ns, record, NULL), 0);
    cr_expect_eq(ngot, 6);
    cr_expect_eq(rebuild(ns, out), 2);
    cr_assert_eq(pl_stacknodes_path(a, 0, &n0, record, NULL), 0);
    cr_expect_eq(n0, 0);
    pl_stacknodes_end();
}

Test(stacknodes, a_binary_tree_of_stacks_rebuilds_exactly, .init = setup)
{
    /* 4096 stacks of 26 frames, a path through a binary tree (as
     * bench/stacks_workload.c): every one rebuilt from the nodes. */
    enum { N = 4096, DEPTH = 12, F = 2 * DEPTH + 2 };
    static uint32_t node[N];
    static uintptr_t st[N][F];
    pl_stacknodes_begin((uint64_t)N * F);
    for (uint32_t s = 0; s < N; s++) {
        for (int l = 0; l < DEPTH; l++) { /* outermost level last */
            st[s][F - 3 - 2 * l] = (s >> l & 1) ? 0xa000 : 0xb000;
            st[s][F - 2 - 2 * l] = 0xc000;
        }
        st[s][F - 2] = 0x5000; /* main */
        st[s][F - 1] = 0x6000; /* libc */
        st[s][0] = 0xd000;     /* the allocating leaf */
        cr_assert_eq(pl_stacknodes_path(st[s], F, &node[s], record, NULL), 0);
    }
    cr_expect_lt(ngot, (uint32_t)N * F / 4, "%u nodes for %u frames: prefixes not shared", ngot, N * F);
    uint64_t out[F];
    for (uint32_t s = 0; s < N; s++) {
        cr_assert_eq(rebuild(node[s], out), F);
        for (int f = 0; f < F; f++)
            cr_assert_eq(out[f], st[s][f], "stack %u frame %d", s, f);
    }
    pl_stacknodes_end();
}

Test(stacknodes, a_full_table_refuses_and_a_new_snapshot_starts_over, .init = setup)
{
    pl_stacknodes_begin(1); /* the smallest table: 512 slots, 384 nodes */
    uintptr_t pc;
    uint32_t n = 0, id = 0;
    int rc = 0;
    for (pc = 1; pc < 10000 && (rc = pl_stacknodes_path(&pc, 1, &id, record, NULL)) == 0; pc++)
        n++;
    cr_expect_eq(rc, -ENOSPC);
    cr_expect_eq(n, 384);
    cr_expect_eq(pl_stacknodes_count(), 384);
    /* Known stacks are still found when full. */
    uintptr_t old = 5;
    cr_expect_eq(pl_stacknodes_path(&old, 1, &id, record, NULL), 0);
    cr_expect_eq(id, 5);
    pl_stacknodes_end();
    ngot = 0;
    pl_stacknodes_begin(1);
    uintptr_t fresh = 0xdead;
    cr_assert_eq(pl_stacknodes_path(&fresh, 1, &id, record, NULL), 0);
    cr_expect_eq(id, 1, "ids count from 1 again in a new snapshot");
    pl_stacknodes_end();
}

static int refuse(void *ctx, uint32_t id, uint32_t parent, uint64_t pc)
{
    (void)ctx, (void)id, (void)parent, (void)pc;
    return -EPIPE;
}

Test(stacknodes, a_send_error_stops_the_path, .init = setup)
{
    uintptr_t a[2] = { 1, 2 };
    uint32_t id;
    pl_stacknodes_begin(2);
    cr_expect_eq(pl_stacknodes_path(a, 2, &id, refuse, NULL), -EPIPE);
    pl_stacknodes_end();
}
