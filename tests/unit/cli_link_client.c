/* cli_client.c - the cli's protocol client against a fake agent on a
 * socketpair: valid conversations decode into the right profile; garbage,
 * truncated, oversized and out-of-order replies are errors, never crashes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/cli_link_client_fixture.h"

TestSuite(cli_client, .init = setup, .fini = teardown, .timeout = 20);

static void hello(void)
{
    struct hi_hello h = { .version = HI_PROTO_VERSION, .pid = 4242, .rate = 4096, .attach_ns = 1000000000ull,
                          .now_ns = 3000000000ull, .slots_patched = 7, .modules_patched = 3, .tick_ms = 500 };
    msg(HI_MSG_HELLO, &h, sizeof(h));
}

static void tick(uint64_t now_ns, uint64_t live)
{
    struct hi_tick t = { .now_ns = now_ns, .rate = 4096, .rss_bytes = 1 << 20 };
    t.totals.est_live_bytes = live;
    t.totals.est_alloc_bytes = 2 * live;
    msg(HI_MSG_TICK, &t, sizeof(t));
}

static void bucket(uint64_t live, uint32_t nframes, const uint64_t *pcs)
{
    unsigned char buf[sizeof(struct hi_snap_bucket) + HI_MAX_FRAMES * 8];
    struct hi_snap_bucket b = { .est_live_bytes = live, .est_live_objects = live / 64, .est_alloc_bytes = 2 * live,
                                .est_alloc_objects = live / 32, .raw_live_objects = 3, .live_age_sum_ms = 3000,
                                .oldest_live_ns = 2000000000ull, .first_tid = 77, .nframes = nframes };
    for (unsigned i = 0; i < HI_GROWTH_POINTS; i++)
        b.growth[i] = i < 2 ? -1 : (int64_t)(i * 100);
    memcpy(buf, &b, sizeof(b));
    memcpy(buf + sizeof(b), pcs, nframes * 8u);
    msg(HI_MSG_SNAP_BUCKET, buf, (uint32_t)(sizeof(b) + nframes * 8u));
}

static void begin(uint64_t nbuckets)
{
    struct hi_snap_begin b = { .pid = 4242, .nthreads = 1, .rate = 4096, .attach_ns = 1000000000ull,
                               .now_ns = 4000000000ull, .nbuckets = nbuckets, .rss_bytes = 5 << 20 };
    b.totals.est_live_bytes = 12345;
    b.totals.raw_samples = 9;
    msg(HI_MSG_SNAP_BEGIN, &b, sizeof(b));
}

static void end(uint64_t sent)
{
    struct hi_snap_end e = { sent };
    msg(HI_MSG_SNAP_END, &e, sizeof(e));
}

Test(cli_client, hello_decodes_the_agent_state)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0, "%s", c.error);
    cr_expect_eq(c.hello.pid, 4242);
    cr_expect_eq(c.hello.rate, 4096);
    cr_expect_eq(c.hello.slots_patched, 7);
    cr_expect_eq(c.hello.tick_ms, 500);
    /* The client sent a HELLO with its version. */
    struct hi_msg_header h;
    struct hi_hello_client hc;
    cr_assert_eq(read(agent_fd, &h, sizeof(h)), (ssize_t)sizeof(h));
    cr_expect_eq(h.magic, HI_PROTO_MAGIC);
    cr_expect_eq(h.type, HI_MSG_HELLO);
    cr_expect_eq(h.length, sizeof(hc));
    cr_assert_eq(read(agent_fd, &hc, sizeof(hc)), (ssize_t)sizeof(hc));
    cr_expect_eq(hc.version, HI_PROTO_VERSION);
}

Test(cli_client, snapshot_builds_the_profile_and_keeps_interleaved_ticks)
{
    uint64_t pcs1[3] = { 0x401000, 0x401100, 0x401200 }, pcs2[1] = { 0x7f0000001234 };
    struct hi_snap_thread th = { .tid = 77, .alive = 1, .alloc_bytes = 1000, .alloc_calls = 10 };
    memcpy(th.name, "worker-with-long", 16); /* 16 bytes, no NUL */
    struct hi_snap_hist hist = { 0 };
    hist.calls[3] = 5;
    hist.bytes[3] = 40;

    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(2);
    tick(3500000000ull, 777);
    msg(HI_MSG_SNAP_THREAD, &th, sizeof(th));
    msg(HI_MSG_SNAP_HIST, &hist, sizeof(hist));
    bucket(8192, 3, pcs1);
    tick(3600000000ull, 888);
    bucket(4096, 1, pcs2);
    msg(HI_MSG_SNAP_MAPS, "00400000-00401000 r-xp 00000000 08:01 12 /bin/x\n", 47);
    msg(HI_MSG_SNAP_MAPS, "7f0000000000-7f0000002000 r-xp 00000000 08:01 13 /lib/y.so\n", 59);
    end(2);

    struct cli_profile p;
    cr_assert_eq(cli_client_snapshot(&c, &p), 0, "%s", c.error);
    cr_expect_eq(p.pid, 4242);
    cr_expect_eq(p.rate, 4096);
    cr_expect_float_eq(p.duration_s, 3.0, 1e-9);
    cr_expect_eq(p.totals.est_live_bytes, 12345);
    cr_expect_eq(p.rss_bytes, 5u << 20);
    cr_expect_eq(p.tick_ms, 500);
    cr_assert_eq(p.nstacks, 2);
    cr_expect_eq(p.stacks[0].npcs, 3);
    cr_expect_eq(p.stacks[0].pcs[2], 0x401200);
    cr_expect_float_eq(p.stacks[0].live_bytes, 8192.0, 1e-9);
    cr_expect_eq(p.stacks[0].first_tid, 77);
    cr_expect_eq(p.stacks[0].growth[0], -1);
    cr_expect_eq(p.stacks[0].growth[7], 700);
    cr_expect_eq(p.stacks[1].pcs[0], 0x7f0000001234);
    cr_assert_eq(p.nthreads, 1);
    cr_expect_str_eq(p.threads[0].name, "worker-with-long");
    cr_expect(p.threads[0].alive);
    cr_expect_eq(p.hist.calls[3], 5);
    cr_expect_eq(p.maps_len, 47 + 59);
    cr_expect_eq(strlen(p.maps), 47 + 59);
    cr_expect(strstr(p.maps, "/lib/y.so\n") != NULL);
    cr_expect_eq(c.nticks, 2);
    cr_expect_eq(c.ticks[1].live_bytes, 888);
    cr_expect_float_eq(c.ticks[1].t_s, 2.6, 1e-9);
    cli_profile_free(&p);
}

static int expect_error(int (*call)(struct cli_client *), int err, const char *words)
{
    int rc = call(&c);
    cr_expect_eq(rc, err, "rc %d (%s), wanted %d", rc, c.error, err);
    if (words)
        cr_expect(strstr(c.error, words) != NULL, "message '%s' lacks '%s'", c.error, words);
    return rc;
}

static int do_snapshot(struct cli_client *cl)
{
    struct cli_profile p;
    int rc = cli_client_snapshot(cl, &p);
    cr_expect_eq(p.nstacks, 0, "profile must be empty after an error");
    cr_expect_null(p.stacks);
    return rc;
}

Test(cli_client, garbage_is_a_protocol_error)
{
    put("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    expect_error(cli_client_hello, -EPROTO, "bad magic");
    /* The connection is unusable afterwards, and says so. */
    cr_expect_eq(cli_client_watch(&c), -ENOTCONN);
}

Test(cli_client, wrong_version_is_refused_with_advice)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION + 1, HI_MSG_HELLO, 0 };
    put(&h, sizeof(h));
    expect_error(cli_client_hello, -EPROTO, "protocol version");
}

Test(cli_client, oversized_message_is_refused_before_reading_it)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, HI_MSG_SNAP_MAPS, HI_MAX_RECORD_BODY + 1 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    put(&h, sizeof(h));
    expect_error(do_snapshot, -EPROTO, "oversized");
}

Test(cli_client, truncated_message_is_an_error)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, HI_MSG_SNAP_BEGIN, sizeof(struct hi_snap_begin) };
    put(&h, sizeof(h));
    put("0123456789", 10);
    shutdown(agent_fd, SHUT_WR); /* EOF for the client; its request still goes out */
    expect_error(do_snapshot, -EPROTO, "truncated");
}

Test(cli_client, closed_connection_is_reported)
{
    close(agent_fd);
    agent_fd = -1;
    expect_error(cli_client_hello, -ECONNRESET, "closed");
}

Test(cli_client, silent_agent_times_out)
{
    c.timeout_ms = 100;
    expect_error(cli_client_hello, -ETIMEDOUT, "did not answer");
}

Test(cli_client, unknown_and_client_side_types_are_refused)
{
    msg(200, NULL, 0);
    expect_error(cli_client_hello, -EPROTO, "unexpected message type 200");
}

Test(cli_client, request_type_from_the_agent_is_refused)
{
    msg(HI_MSG_DETACH, NULL, 0);
    expect_error(cli_client_hello, -EPROTO, "unexpected message type");
}

Test(cli_client, hello_with_wrong_length_is_refused)
{
    struct hi_hello h = { .version = HI_PROTO_VERSION };
    msg(HI_MSG_HELLO, &h, sizeof(h) - 4);
    expect_error(cli_client_hello, -EPROTO, "malformed HELLO");
}

Test(cli_client, bucket_with_too_many_frames_is_refused)
{
    unsigned char buf[sizeof(struct hi_snap_bucket)];
    struct hi_snap_bucket b = { .nframes = HI_MAX_FRAMES + 1 };
    memcpy(buf, &b, sizeof(b));
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    msg(HI_MSG_SNAP_BUCKET, buf, sizeof(buf));
    expect_error(do_snapshot, -EPROTO, "frames");
}

Test(cli_client, bucket_whose_length_disagrees_with_its_frames_is_refused)
{
    unsigned char buf[sizeof(struct hi_snap_bucket) + 8];
    struct hi_snap_bucket b = { .nframes = 2 };
    memcpy(buf, &b, sizeof(b));
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    msg(HI_MSG_SNAP_BUCKET, buf, sizeof(buf));
    expect_error(do_snapshot, -EPROTO, "does not match");
}

Test(cli_client, maps_line_past_the_bound_is_refused_across_records)
{
    char half[CLI_CLIENT_MAX_MAPS_LINE / 2 + 1];
    memset(half, '/', sizeof(half));
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_MAPS, half, sizeof(half)); /* one line in two records */
    msg(HI_MSG_SNAP_MAPS, half, sizeof(half));
    end(0);
    expect_error(do_snapshot, -EPROTO, "maps line longer than 8192 bytes, the bound");
}

Test(cli_client, maps_line_within_the_bound_is_kept_across_records)
{
    char half[CLI_CLIENT_MAX_MAPS_LINE / 2];
    memset(half, '/', sizeof(half));
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_MAPS, half, sizeof(half));
    half[sizeof(half) - 1] = '\n';
    msg(HI_MSG_SNAP_MAPS, half, sizeof(half)); /* 8191 bytes and its newline */
    msg(HI_MSG_SNAP_MAPS, half, sizeof(half)); /* the next line starts afresh */
    end(0);
    struct cli_profile p;
    cr_assert_eq(cli_client_snapshot(&c, &p), 0, "%s", c.error);
    cr_expect_eq(p.maps_len, 3 * sizeof(half));
    cli_profile_free(&p);
}

Test(cli_client, end_with_wrong_count_is_refused)
{
    uint64_t pc = 0x1234;
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(2);
    bucket(100, 1, &pc);
    end(2);
    expect_error(do_snapshot, -EPROTO, "announced 2 stacks but sent 1");
}

Test(cli_client, ack_in_the_middle_of_a_snapshot_is_refused)
{
    struct hi_ack a = { HI_MSG_WATCH };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_ACK, &a, sizeof(a));
    expect_error(do_snapshot, -EPROTO, "middle of a snapshot");
}

Test(cli_client, ack_of_another_request_is_refused)
{
    struct hi_ack a = { HI_MSG_DETACH };
    msg(HI_MSG_ACK, &a, sizeof(a));
    expect_error(cli_client_watch, -EPROTO, "acknowledged DETACH instead of WATCH");
}

Test(cli_client, agent_error_message_is_shown_without_control_characters)
{
    struct hi_error e = { .code = -EPERM };
    strcpy(e.message, "peer uid 65534 may not connect\033[2J");
    msg(HI_MSG_ERROR, &e, sizeof(e));
    expect_error(cli_client_hello, -EREMOTEIO, "peer uid 65534 may not connect");
    cr_expect(strchr(c.error, '\033') == NULL);
    cr_expect(strstr(c.error, "Operation not permitted") != NULL, "%s", c.error);
    cr_expect_eq(c.remote_code, -EPERM);
}

Test(cli_client, requests_are_acknowledged)
{
    struct hi_ack a = { HI_MSG_SET_RATE };
    msg(HI_MSG_ACK, &a, sizeof(a));
    cr_expect_eq(cli_client_set_rate(&c, 1024), 0, "%s", c.error);
    a.type = HI_MSG_OWN_SESSION;
    msg(HI_MSG_ACK, &a, sizeof(a));
    cr_expect_eq(cli_client_own_session(&c), 0, "%s", c.error);
    /* What went out: SET_RATE with the rate. */
    struct hi_msg_header h;
    struct hi_set_rate r;
    cr_assert_eq(read(agent_fd, &h, sizeof(h)), (ssize_t)sizeof(h));
    cr_expect_eq(h.type, HI_MSG_SET_RATE);
    cr_assert_eq(read(agent_fd, &r, sizeof(r)), (ssize_t)sizeof(r));
    cr_expect_eq(r.rate, 1024);
}

Test(cli_client, pump_reads_ticks_and_times_out_quietly)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    cr_expect_eq(cli_client_pump(&c, 0), 0);
    tick(2000000000ull, 55);
    cr_expect_eq(cli_client_pump(&c, 1000), 1);
    cr_expect_eq(c.last_tick.totals.est_live_bytes, 55);
    cr_expect_eq(c.nticks, 1);
    struct cli_profile p = { 0 };
    cr_assert_eq(cli_client_copy_ticks(&c, &p), 0);
    cr_expect_eq(p.nticks, 1);
    cr_expect_float_eq(p.ticks[0].t_s, 1.0, 1e-9);
    cli_profile_free(&p);
    close(agent_fd);
    agent_fd = -1;
    cr_expect_eq(cli_client_pump(&c, 1000), -ECONNRESET);
}

Test(cli_client, unsolicited_message_while_idle_is_refused)
{
    struct hi_snap_end e = { 0 };
    msg(HI_MSG_SNAP_END, &e, sizeof(e));
    cr_expect_eq(cli_client_pump(&c, 1000), -EPROTO);
}

/* A big snapshot needs a writer that runs alongside the reader. */
struct writer_arg {
    unsigned nbuckets;
};

static void *big_writer(void *arg)
{
    struct writer_arg *w = arg;
    uint64_t pcs[HI_MAX_FRAMES];
    for (unsigned i = 0; i < HI_MAX_FRAMES; i++)
        pcs[i] = 0x400000 + i;
    begin(w->nbuckets);
    for (unsigned i = 0; i < w->nbuckets; i++)
        bucket(i + 1, HI_MAX_FRAMES, pcs);
    char maps[HI_MAX_RECORD_BODY];
    memset(maps, 'm', sizeof(maps));
    for (size_t i = 127; i < sizeof(maps); i += 128)
        maps[i] = '\n'; /* lines of a real length (the bound is CLI_CLIENT_MAX_MAPS_LINE) */
    msg(HI_MSG_SNAP_MAPS, maps, sizeof(maps));
    end(w->nbuckets);
    return NULL;
}

Test(cli_client, large_snapshot_with_maximal_records)
{
    pthread_t th;
    struct writer_arg w = { 3000 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    pthread_create(&th, NULL, big_writer, &w);
    struct cli_profile p;
    int rc = cli_client_snapshot(&c, &p);
    pthread_join(th, NULL);
    cr_assert_eq(rc, 0, "%s", c.error);
    cr_expect_eq(p.nstacks, 3000);
    cr_expect_eq(p.stacks[2999].npcs, HI_MAX_FRAMES);
    cr_expect_eq(p.maps_len, HI_MAX_RECORD_BODY);
    cli_profile_free(&p);
}

/* Random bytes after a valid header stream: whatever comes, the client
 * returns an error or a profile and never crashes (ASan watches). */
Test(cli_client, random_garbage_never_crashes)
{
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        teardown();
        setup();
        c.timeout_ms = 50;
        hello();
        cr_assert_eq(cli_client_hello(&c), 0);
        begin(1);
        unsigned char junk[600];
        for (size_t i = 0; i < sizeof(junk); i++)
            junk[i] = (unsigned char)(rand_r(&seed) >> 7);
        /* Half the rounds: a valid header with a random type and length. */
        if (round % 2) {
            struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, (uint16_t)(32 + round % 8),
                                       (uint32_t)(rand_r(&seed) % 700) };
            memcpy(junk, &h, sizeof(h));
        }
        put(junk, sizeof(junk));
        shutdown(agent_fd, SHUT_WR);
        struct cli_profile p;
        int rc = cli_client_snapshot(&c, &p);
        cr_expect(rc < 0, "garbage decoded as a snapshot in round %d", round);
        cr_expect(c.error[0] != '\0');
    }
}

Test(cli_client, detach_waits_for_the_agent_to_close)
{
    struct hi_ack a = { HI_MSG_DETACH };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    msg(HI_MSG_ACK, &a, sizeof(a));
    tick(2000000000ull, 1); /* in flight when the agent detaches */
    cr_assert_eq(cli_client_detach(&c), 0, "%s", c.error);
    cr_expect_eq(cli_client_wait_closed(&c, 200), -ETIMEDOUT, "still open: must time out");
    close(agent_fd);
    agent_fd = -1;
    cr_expect_eq(cli_client_wait_closed(&c, 2000), 0, "%s", c.error);
}

/* Stacks as nodes (HI_SNAP_WANT_NODES, issue 17). */
static void nodes(const uint32_t *parent, const uint64_t *pc, size_t n)
{
    struct hi_snap_node nd[16];
    for (size_t i = 0; i < n; i++)
        nd[i] = (struct hi_snap_node){ pc[i], parent[i] };
    msg(HI_MSG_SNAP_NODES, nd, (uint32_t)(n * sizeof(nd[0])));
}

/* A SNAP_STACKS record, its varints written here by hand (not with
 * common/snap_stack.h, the code under test). */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

static void stack_rec(const uint32_t *node, const uint32_t *depth, const uint32_t *kind, size_t n)
{
    uint8_t buf[8 * 22 * 10];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t f[22] = { node[i], depth[i], kind[i], 77u << 1, 0, 0, 0, 0, 1000 * (i + 1), 0, 0, 0,
                           2000000000ull, 3000 };
        for (int g = 0; g < 8; g++)
            f[14 + g] = g < 2 ? 1 /* zigzag(-1) */ : (uint64_t)(g * 100) << 1;
        for (int k = 0; k < 22; k++)
            len += put_varint(buf + len, f[k]);
    }
    msg(HI_MSG_SNAP_STACKS, buf, (uint32_t)len);
}

Test(cli_client, snapshot_of_stack_nodes_builds_the_same_stacks)
{
    /* 1 main, 2 run(1), 3 leaf(2), 4 other(1) */
    static const uint32_t parent[4] = { 0, 1, 2, 1 };
    static const uint64_t pc[4] = { 0x401000, 0x401100, 0x401200, 0x401300 };
    uint64_t plain[2] = { 0x7f0000001234, 0x401000 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(4);
    nodes(parent, pc, 2);
    stack_rec((uint32_t[]){ 2 }, (uint32_t[]){ 2 }, (uint32_t[]){ HI_KIND_MALLOC }, 1);
    bucket(4096, 2, plain); /* a stack past the agent's node table */
    nodes(parent + 2, pc + 2, 2);
    stack_rec((uint32_t[]){ 3, 4 }, (uint32_t[]){ 3, 2 }, (uint32_t[]){ HI_KIND_MALLOC, HI_KIND_MMAP }, 2);
    end(4);
    struct cli_profile p;
    cr_assert_eq(cli_client_snapshot(&c, &p), 0, "%s", c.error);
    /* The request asked for nodes. */
    struct hi_msg_header h;
    struct hi_msg_header hh;
    struct hi_snapshot_req req;
    cr_assert_eq(read(agent_fd, &hh, sizeof(hh)), (ssize_t)sizeof(hh)); /* HELLO */
    cr_assert_eq(read(agent_fd, &req, 4), 4);                            /* its body */
    cr_assert_eq(read(agent_fd, &h, sizeof(h)), (ssize_t)sizeof(h));
    cr_expect_eq(h.type, HI_MSG_SNAPSHOT_REQ);
    cr_assert_eq(h.length, sizeof(req));
    cr_assert_eq(read(agent_fd, &req, sizeof(req)), (ssize_t)sizeof(req));
    cr_expect_eq(req.flags & HI_SNAP_WANT_NODES, HI_SNAP_WANT_NODES);

    cr_assert_eq(p.nstacks, 4);
    cr_assert_eq(p.stacks[0].npcs, 2);
    cr_expect_eq(p.stacks[0].pcs[0], 0x401100);
    cr_expect_eq(p.stacks[0].pcs[1], 0x401000);
    cr_expect_float_eq(p.stacks[0].live_bytes, 1000.0, 1e-9);
    cr_expect_eq(p.stacks[1].pcs[0], 0x7f0000001234);
    cr_assert_eq(p.stacks[2].npcs, 3);
    cr_expect_eq(p.stacks[2].pcs[0], 0x401200);
    cr_expect_eq(p.stacks[2].pcs[2], 0x401000);
    cr_assert_eq(p.stacks[3].npcs, 2);
    cr_expect_eq(p.stacks[3].pcs[0], 0x401300);
    cr_expect_eq(p.stacks[3].kind, HI_KIND_MMAP);
    cr_expect_eq(p.stacks[3].first_tid, 77);
    cr_expect_float_eq(p.stacks[3].live_bytes, 2000.0, 1e-9);
    cr_expect_eq(p.stacks[3].oldest_live_ns, 2000000000ull);
    cr_expect_eq(p.stacks[3].live_age_sum_ms, 3000);
    cr_expect_eq(p.stacks[3].growth[0], -1);
    cr_expect_eq(p.stacks[3].growth[7], 700);
    cli_profile_free(&p);
}

Test(cli_client, stack_naming_a_node_not_sent_is_refused)
{
    static const uint32_t parent[1] = { 0 };
    static const uint64_t pc[1] = { 0x401000 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    nodes(parent, pc, 1);
    stack_rec((uint32_t[]){ 2 }, (uint32_t[]){ 2 }, (uint32_t[]){ 0 }, 1);
    end(1);
    expect_error(do_snapshot, -EPROTO, "not sent");
}

Test(cli_client, stack_nodes_of_a_ragged_length_are_refused)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    struct hi_snap_node nd[2] = { { 0x401000, 0 }, { 0x401100, 1 } };
    msg(HI_MSG_SNAP_NODES, nd, sizeof(nd) - 3);
    expect_error(do_snapshot, -EPROTO, "SNAP_NODES");
}

Test(cli_client, stack_whose_frame_count_is_not_its_depth_is_refused)
{
    static const uint32_t parent[1] = { 0 };
    static const uint64_t pc[1] = { 0x401000 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    nodes(parent, pc, 1);
    stack_rec((uint32_t[]){ 1 }, (uint32_t[]){ 5 }, (uint32_t[]){ 0 }, 1);
    expect_error(do_snapshot, -EPROTO, "has 1");
}

Test(cli_client, stacks_record_with_an_unknown_kind_is_refused)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    stack_rec((uint32_t[]){ 0 }, (uint32_t[]){ 0 }, (uint32_t[]){ 9 }, 1);
    expect_error(do_snapshot, -EPROTO, "kind");
}

Test(cli_client, stacks_record_cut_inside_a_stack_is_refused)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    uint8_t buf[22 * 10];
    size_t len = 0;
    for (int k = 0; k < 22; k++)
        len += put_varint(buf + len, k == 8 ? 1u << 20 : 0);
    msg(HI_MSG_SNAP_STACKS, buf, (uint32_t)len - 1); /* the last varint missing */
    expect_error(do_snapshot, -EPROTO, "cut off");
}

Test(cli_client, stacks_record_with_a_varint_past_64_bits_is_refused)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    uint8_t buf[64];
    memset(buf, 0xff, 11); /* 11 bytes of continuation: no uint64_t */
    buf[11] = 0x01;
    msg(HI_MSG_SNAP_STACKS, buf, 12);
    expect_error(do_snapshot, -EPROTO, "SNAP_STACKS");
}

Test(cli_client, stacks_node_past_32_bits_is_refused)
{
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(1);
    uint8_t buf[22 * 10];
    size_t len = put_varint(buf, 1ull << 32); /* node */
    for (int k = 1; k < 22; k++)
        len += put_varint(buf + len, 0);
    msg(HI_MSG_SNAP_STACKS, buf, (uint32_t)len);
    expect_error(do_snapshot, -EPROTO, "SNAP_STACKS");
}

/* SNAP_WALKS (issue 17): the walks and truncated counts reach the profile;
 * a longer body (a later agent's) is read for the fields we know. */
Test(cli_client, stack_walks_reach_the_profile)
{
    struct { struct hi_snap_walks w; uint64_t later_field; } body = { { 948, 474, 5 << 20, 33 }, 7 };
    struct cli_profile p;
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_WALKS, &body, sizeof(body));
    end(0);
    cr_assert_eq(cli_client_snapshot(&c, &p), 0);
    cr_expect(p.have_walks);
    cr_expect_eq(p.walks.walks, 948);
    cr_expect_eq(p.walks.truncated, 474);
    cr_expect_eq(p.walks.budget_bytes, 5 << 20);
    cr_expect_eq(p.walks.budget_dropped, 33);
    cli_profile_free(&p);
}

/* An agent before the memory budget (issue 25) sends walks and truncated
 * only: read, with no budget. */
Test(cli_client, stack_walks_without_a_budget_are_read)
{
    struct hi_snap_walks w = { 948, 474, 0, 0 };
    struct cli_profile p;
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_WALKS, &w, offsetof(struct hi_snap_walks, budget_bytes));
    end(0);
    cr_assert_eq(cli_client_snapshot(&c, &p), 0);
    cr_expect_eq(p.walks.walks, 948);
    cr_expect_eq(p.walks.budget_bytes, 0);
    cr_expect_eq(p.walks.budget_dropped, 0);
    cli_profile_free(&p);
}

Test(cli_client, short_stack_walks_are_refused)
{
    struct hi_snap_walks w = { 10, 1, 0, 0 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_WALKS, &w, offsetof(struct hi_snap_walks, budget_bytes) - 1);
    expect_error(do_snapshot, -EPROTO, "malformed or repeated SNAP_WALKS");
}

Test(cli_client, repeated_stack_walks_are_refused)
{
    struct hi_snap_walks w = { 10, 1, 0, 0 };
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_WALKS, &w, sizeof(w));
    msg(HI_MSG_SNAP_WALKS, &w, sizeof(w));
    expect_error(do_snapshot, -EPROTO, "malformed or repeated SNAP_WALKS");
}

Test(cli_client, more_truncated_than_walks_is_capped)
{
    struct hi_snap_walks w = { 10, 50, 0, 0 };
    struct cli_profile p;
    hello();
    cr_assert_eq(cli_client_hello(&c), 0);
    begin(0);
    msg(HI_MSG_SNAP_WALKS, &w, sizeof(w));
    end(0);
    cr_assert_eq(cli_client_snapshot(&c, &p), 0);
    cr_expect_eq(p.walks.truncated, 10);
    cli_profile_free(&p);
}
