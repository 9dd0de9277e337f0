/* cli_target_client_push.c - snapshots the agent pushes by itself
 * (SNAP_PUSH, issue 16), against a fake agent on a socketpair: read
 * wherever the client is waiting, kept for cli_client_take_pushed, and a
 * malformed or nested push is an error. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/cli_link_client_fixture.h"

TestSuite(cli_client_push, .init = setup, .fini = teardown, .timeout = 20);

/* A whole snapshot taken at now_ns with one stack of `live` bytes. */
static void snapshot(uint64_t now_ns, uint64_t live)
{
    struct hi_snap_begin b = { .pid = 4242, .rate = 4096, .attach_ns = 1000000000ull, .now_ns = now_ns, .nbuckets = 1 };
    msg(HI_MSG_SNAP_BEGIN, &b, sizeof(b));
    struct hi_snap_hist hist = { 0 };
    msg(HI_MSG_SNAP_HIST, &hist, sizeof(hist));
    unsigned char buf[sizeof(struct hi_snap_bucket) + 8];
    struct hi_snap_bucket k = { .est_live_bytes = live, .nframes = 1 };
    uint64_t pc = 0x401000;
    memcpy(buf, &k, sizeof(k));
    memcpy(buf + sizeof(k), &pc, 8);
    msg(HI_MSG_SNAP_BUCKET, buf, sizeof(buf));
    struct hi_snap_end e = { 1 };
    msg(HI_MSG_SNAP_END, &e, sizeof(e));
}

static void push_signal(int sig)
{
    struct hi_snap_push w = { .reason = HI_PUSH_SIGNAL, .signo = sig, .si_code = 1, .tid = 4243 };
    msg(HI_MSG_SNAP_PUSH, &w, sizeof(w));
}

Test(cli_client_push, a_push_before_an_answer_is_kept_apart)
{
    push_signal(11);
    snapshot(5000000000ull, 1 << 20);
    snapshot(6000000000ull, 2 << 20); /* the answer to our request */
    struct cli_profile p, q;
    struct hi_snap_push why;
    cr_assert_eq(cli_client_snapshot(&c, &p), 0, "%s", c.error);
    cr_expect_eq(p.snapshot_ns, 6000000000ull);
    cr_expect_eq(p.stacks[0].live_bytes, (double)(2 << 20));
    cr_assert(cli_client_take_pushed(&c, &q, &why));
    cr_expect_eq(why.reason, HI_PUSH_SIGNAL);
    cr_expect_eq(why.signo, 11);
    cr_expect_eq(why.tid, 4243);
    cr_expect_eq(q.snapshot_ns, 5000000000ull);
    cr_expect_eq(q.nstacks, 1);
    cr_expect_eq(q.stacks[0].live_bytes, (double)(1 << 20));
    cr_expect_not(cli_client_take_pushed(&c, &q, &why), "taken twice");
    cli_profile_free(&p);
    cli_profile_free(&q);
}

Test(cli_client_push, pump_reads_a_push_and_the_newest_wins)
{
    struct hi_snap_push w = { .reason = HI_PUSH_PRESSURE, .pressure_kind = HI_PRESSURE_CGROUP_V2,
                              .usage_bytes = 190u << 20, .limit_bytes = 200u << 20 };
    msg(HI_MSG_SNAP_PUSH, &w, sizeof(w));
    snapshot(5000000000ull, 1 << 20);
    w.usage_bytes = 199u << 20;
    msg(HI_MSG_SNAP_PUSH, &w, sizeof(w));
    snapshot(6000000000ull, 3 << 20);
    cr_assert_eq(cli_client_pump(&c, 1000), 2, "%s", c.error);
    cr_assert_eq(cli_client_pump(&c, 1000), 2, "%s", c.error);
    cr_expect_eq(c.push_count, 2);
    struct cli_profile q;
    struct hi_snap_push why;
    cr_assert(cli_client_take_pushed(&c, &q, &why));
    cr_expect_eq(why.reason, HI_PUSH_PRESSURE);
    cr_expect_eq(why.usage_bytes, 199u << 20);
    cr_expect_eq(q.snapshot_ns, 6000000000ull);
    cli_profile_free(&q);
}

Test(cli_client_push, a_push_inside_a_push_is_refused)
{
    push_signal(6);
    struct hi_snap_begin b = { .pid = 4242, .now_ns = 5000000000ull, .nbuckets = 0 };
    msg(HI_MSG_SNAP_BEGIN, &b, sizeof(b));
    push_signal(6);
    cr_expect_eq(cli_client_pump(&c, 1000), -EPROTO);
    cr_expect(strstr(c.error, "in the middle of") != NULL, "%s", c.error);
    struct cli_profile q;
    struct hi_snap_push why;
    cr_expect_not(cli_client_take_pushed(&c, &q, &why));
}

Test(cli_client_push, a_malformed_push_is_refused)
{
    uint32_t short_body = 1;
    msg(HI_MSG_SNAP_PUSH, &short_body, sizeof(short_body));
    cr_expect_eq(cli_client_pump(&c, 1000), -EPROTO);
    cr_expect(strstr(c.error, "malformed SNAP_PUSH") != NULL, "%s", c.error);
}

Test(cli_client_push, a_push_cut_short_keeps_nothing)
{
    push_signal(11);
    struct hi_snap_begin b = { .pid = 4242, .now_ns = 5000000000ull, .nbuckets = 1 };
    msg(HI_MSG_SNAP_BEGIN, &b, sizeof(b));
    close(agent_fd); /* the process died in the middle of it */
    agent_fd = -1;
    int rc = cli_client_pump(&c, 1000);
    cr_expect(rc < 0, "rc %d", rc);
    struct cli_profile q;
    struct hi_snap_push why;
    cr_expect_not(cli_client_take_pushed(&c, &q, &why));
}
