/* cli_link_client_python.c - the cli reads a snapshot's Python frames
 * (issue 29): it asks for them (HI_SNAP_WANT_RUNTIME_FRAMES), keeps the
 * codes SNAP_PYCODE names and the counts of SNAP_PYTHON, keeps Python
 * frame words in the stacks, and refuses a frame it cannot read: a kind
 * it does not know, a Python frame before SNAP_PYTHON, codes out of
 * order or cut off. */
#include <errno.h>
#include <string.h>

#include "cli_link_client_fixture.h"

TestSuite(cli_client_python, .init = setup, .fini = teardown, .timeout = 20);

static void hello(void)
{
    struct hi_hello h = { .version = HI_PROTO_VERSION, .pid = 4242, .rate = 4096, .tick_ms = 500 };
    msg(HI_MSG_HELLO, &h, sizeof(h));
    cr_assert_eq(cli_client_hello(&c), 0, "%s", c.error);
}

static void begin(uint64_t nbuckets)
{
    struct hi_snap_begin b = { .pid = 4242, .nthreads = 0, .rate = 4096, .nbuckets = nbuckets };
    msg(HI_MSG_SNAP_BEGIN, &b, sizeof(b));
}

static void bucket(uint32_t nframes, const uint64_t *pcs)
{
    unsigned char buf[sizeof(struct hi_snap_bucket) + HI_MAX_FRAMES * 8];
    struct hi_snap_bucket b = { .est_live_bytes = 4096, .nframes = nframes };
    memcpy(buf, &b, sizeof(b));
    memcpy(buf + sizeof(b), pcs, nframes * 8u);
    msg(HI_MSG_SNAP_BUCKET, buf, (uint32_t)(sizeof(b) + nframes * 8u));
}

static void end(uint64_t sent)
{
    struct hi_snap_end e = { sent };
    msg(HI_MSG_SNAP_END, &e, sizeof(e));
}

static void python(void)
{
    struct hi_snap_python st = { .state = HI_PYTHON_READ, .minor = 11, .with_frames = 9, .no_state = 2, .codes = 2 };
    msg(HI_MSG_SNAP_PYTHON, &st, sizeof(st));
}

/* SNAP_PYCODE entries (id, name, file) into one record. */
static void pycodes(unsigned n, const uint32_t *ids, const char *const *names, const char *const *files, size_t cut)
{
    unsigned char buf[1024];
    size_t len = 0;
    for (unsigned i = 0; i < n; i++) {
        struct hi_snap_pycode h = { ids[i], 10 * ids[i], (uint16_t)strlen(names[i]), (uint16_t)strlen(files[i]) };
        memcpy(buf + len, &h, sizeof(h));
        memcpy(buf + len + sizeof(h), names[i], h.name_len);
        memcpy(buf + len + sizeof(h) + h.name_len, files[i], h.file_len);
        len += sizeof(h) + h.name_len + h.file_len;
    }
    msg(HI_MSG_SNAP_PYCODE, buf, (uint32_t)(len - cut));
}

static int refused(const char *words)
{
    struct cli_profile p;
    int rc = cli_client_snapshot(&c, &p);
    cr_expect_eq(rc, -EPROTO, "rc %d (%s)", rc, c.error);
    cr_expect(strstr(c.error, words) != NULL, "message '%s' lacks '%s'", c.error, words);
    cr_expect_eq(p.nstacks, 0);
    cr_expect_eq(p.python.ncodes, 0);
    return rc;
}

Test(cli_client_python, python_frames_and_their_codes_are_kept)
{
    hello();
    begin(1);
    python();
    pycodes(2, (uint32_t[]){ 3, 7 }, (const char *const[]){ "grow_cache", "Cache.fill" },
            (const char *const[]){ "app.py", "/srv/lib/cache.py" }, 0);
    uint64_t pcs[4] = { 0x401234, hi_frame_python(3, 24), hi_frame_python(7, 31), 0x401000 };
    bucket(4, pcs);
    end(1);
    struct cli_profile p;
    cr_assert_eq(cli_client_snapshot(&c, &p), 0, "%s", c.error);
    /* It asked for them. */
    struct hi_msg_header h;
    struct hi_snapshot_req req;
    cr_assert_eq(read(agent_fd, &h, sizeof(h)), (ssize_t)sizeof(h)); /* HELLO */
    cr_assert_eq(read(agent_fd, &req, 4), 4);
    cr_assert_eq(read(agent_fd, &h, sizeof(h)), (ssize_t)sizeof(h));
    cr_assert_eq(h.type, HI_MSG_SNAPSHOT_REQ);
    cr_assert_eq(read(agent_fd, &req, sizeof(req)), (ssize_t)sizeof(req));
    cr_expect_eq(req.flags & HI_SNAP_WANT_RUNTIME_FRAMES, HI_SNAP_WANT_RUNTIME_FRAMES);

    cr_assert(p.python.have);
    cr_expect_eq(p.python.st.minor, 11);
    cr_expect_eq(p.python.st.with_frames, 9);
    cr_expect_eq(p.python.st.no_state, 2);
    cr_assert_eq(p.python.ncodes, 2);
    const struct cli_pycode *k = cli_python_code(&p.python, 7);
    cr_assert_not_null(k);
    cr_expect_str_eq(k->name, "Cache.fill");
    cr_expect_str_eq(k->file, "/srv/lib/cache.py");
    cr_expect_eq(k->firstlineno, 70);
    cr_expect_null(cli_python_code(&p.python, 5));
    cr_assert_eq(p.nstacks, 1);
    cr_assert_eq(p.stacks[0].npcs, 4);
    cr_expect_eq(hi_frame_kind(p.stacks[0].pcs[1]), HI_FRAME_PYTHON);
    cr_expect_eq(hi_frame_python_code(p.stacks[0].pcs[1]), 3);
    cr_expect_eq(hi_frame_python_line(p.stacks[0].pcs[1]), 24);
    cli_profile_free(&p);
    cr_expect_eq(p.python.ncodes, 0);
}

Test(cli_client_python, a_frame_of_an_unknown_kind_is_refused)
{
    hello();
    begin(1);
    python();
    uint64_t pcs[2] = { 0x401234, (UINT64_C(2) << HI_FRAME_KIND_SHIFT) | 5 };
    bucket(2, pcs);
    refused("frame of kind 2");
}

Test(cli_client_python, a_python_frame_before_snap_python_is_refused)
{
    hello();
    begin(1);
    uint64_t pcs[2] = { 0x401234, hi_frame_python(3, 24) };
    bucket(2, pcs);
    refused("before SNAP_PYTHON");
}

Test(cli_client_python, codes_out_of_order_are_refused)
{
    hello();
    begin(0);
    python();
    pycodes(2, (uint32_t[]){ 7, 3 }, (const char *const[]){ "a", "b" }, (const char *const[]){ "x.py", "y.py" }, 0);
    refused("code id 3");
}

Test(cli_client_python, a_code_cut_off_is_refused)
{
    hello();
    begin(0);
    python();
    pycodes(1, (uint32_t[]){ 7 }, (const char *const[]){ "grow_cache" }, (const char *const[]){ "app.py" }, 3);
    refused("SNAP_PYCODE");
}

Test(cli_client_python, codes_before_snap_python_are_refused)
{
    hello();
    begin(0);
    pycodes(1, (uint32_t[]){ 7 }, (const char *const[]){ "a" }, (const char *const[]){ "x.py" }, 0);
    refused("before SNAP_PYTHON");
}
