/* payload_serve_proto_check.c - the agent's request handling before it
 * acts (payload/serve/proto_check.c): a byte stream cut into messages at
 * any read size, headers refused with the code and words the ERROR reply
 * carries, HELLO first, SET_RATE's bounds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "payload/serve/proto_check.h"

static struct hi_msg_header header(uint16_t type, uint32_t length)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, length };
    return h;
}

/* Feeds len bytes of stream into rx, step bytes per read at most, as the
 * agent does (never past the current message); returns what the last
 * pl_proto_rx_got said and how many bytes were taken in *used. */
static int feed(struct pl_proto_rx *rx, const unsigned char *stream, size_t len, size_t step, size_t *used,
                const char **why)
{
    size_t off = 0;
    int r = PL_RX_MORE;
    while (off < len && r == PL_RX_MORE) {
        uint32_t n = pl_proto_rx_want(rx);
        if (n > step)
            n = (uint32_t)step;
        if (n > len - off)
            n = (uint32_t)(len - off);
        memcpy(rx->buf + rx->have, stream + off, n);
        off += n;
        r = pl_proto_rx_got(rx, n, why);
    }
    *used = off;
    return r;
}

Test(payload_serve_proto_check, two_requests_in_one_stream_at_any_read_size)
{
    unsigned char stream[64];
    struct hi_msg_header h1 = header(HI_MSG_SET_RATE, sizeof(struct hi_set_rate));
    struct hi_set_rate rate = { 4096 };
    struct hi_msg_header h2 = header(HI_MSG_SNAPSHOT_REQ, 0);
    size_t len = 0;
    memcpy(stream + len, &h1, sizeof(h1)), len += sizeof(h1);
    memcpy(stream + len, &rate, sizeof(rate)), len += sizeof(rate);
    memcpy(stream + len, &h2, sizeof(h2)), len += sizeof(h2);
    for (size_t step = 1; step <= len; step++) {
        struct pl_proto_rx rx;
        pl_proto_rx_reset(&rx);
        const char *why = NULL;
        size_t used;
        cr_assert_eq(feed(&rx, stream, len, step, &used, &why), PL_RX_MESSAGE, "step %zu", step);
        cr_expect_eq(used, sizeof(h1) + sizeof(rate), "step %zu: the second request stays unread", step);
        struct hi_set_rate got;
        memcpy(&got, rx.buf + PL_PROTO_HDR, sizeof(got));
        cr_expect_eq(got.rate, 4096u);
        pl_proto_rx_reset(&rx);
        size_t used2;
        cr_assert_eq(feed(&rx, stream + used, len - used, step, &used2, &why), PL_RX_MESSAGE);
        cr_expect_eq(used2, sizeof(h2));
    }
}

Test(payload_serve_proto_check, bad_headers_are_refused_as_soon_as_complete)
{
    struct {
        struct hi_msg_header h;
        int code;
        const char *why;
    } cases[] = {
        { { 0x12345678u, HI_PROTO_VERSION, HI_MSG_HELLO, sizeof(struct hi_hello_client) }, -EPROTO,
          "bad magic: not a heapinject client" },
        { { HI_PROTO_MAGIC, HI_PROTO_VERSION + 1, HI_MSG_HELLO, sizeof(struct hi_hello_client) },
          -EPROTONOSUPPORT, "protocol version mismatch: update heapinject" },
        { header(HI_MSG_ACK, 0), -EPROTO, "unknown message type" }, /* agent -> client only */
        { header(HI_MSG_SNAPSHOT_REQ, HI_MAX_REQUEST_BODY + 1), -EMSGSIZE, "bad message length" },
        { header(HI_MSG_SET_RATE, sizeof(struct hi_set_rate) - 1), -EMSGSIZE, "bad message length" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pl_proto_rx rx;
        pl_proto_rx_reset(&rx);
        const char *why = NULL;
        size_t used;
        int r = feed(&rx, (const unsigned char *)&cases[i].h, sizeof(cases[i].h), 3, &used, &why);
        cr_expect_eq(r, cases[i].code, "case %zu: %d", i, r);
        cr_expect_str_eq(why ? why : "", cases[i].why, "case %zu", i);
        cr_expect_eq(used, PL_PROTO_HDR, "case %zu: refused with the header, not later", i);
    }
}

Test(payload_serve_proto_check, hello_first_and_the_rate_bounds)
{
    const char *why = NULL;
    struct hi_msg_header h = header(HI_MSG_SNAPSHOT_REQ, 0);
    cr_expect_eq(pl_proto_check_request(&h, NULL, false, &why), -EPROTO);
    cr_expect_str_eq(why, "HELLO must come first");
    cr_expect_eq(pl_proto_check_request(&h, NULL, true, &why), 0);

    struct hi_hello_client hc;
    memset(&hc, 0, sizeof(hc));
    hc.version = HI_PROTO_VERSION;
    h = header(HI_MSG_HELLO, sizeof(hc));
    cr_expect_eq(pl_proto_check_request(&h, (const unsigned char *)&hc, false, &why), 0);
    hc.version = HI_PROTO_VERSION + 1;
    cr_expect_eq(pl_proto_check_request(&h, (const unsigned char *)&hc, false, &why), -EPROTONOSUPPORT);

    h = header(HI_MSG_SET_RATE, sizeof(struct hi_set_rate));
    uint64_t rates[] = { 0, 1, PL_PROTO_MAX_RATE, PL_PROTO_MAX_RATE + 1 };
    int want[] = { -EINVAL, 0, 0, -EINVAL };
    for (size_t i = 0; i < 4; i++) {
        struct hi_set_rate r = { rates[i] };
        why = NULL;
        cr_expect_eq(pl_proto_check_request(&h, (const unsigned char *)&r, true, &why), want[i], "rate %llu",
                     (unsigned long long)rates[i]);
        if (want[i])
            cr_expect_str_eq(why, "rate must be between 1 and 2^40 bytes");
    }
}

Test(payload_serve_proto_check, a_read_past_the_message_is_refused)
{
    struct pl_proto_rx rx;
    pl_proto_rx_reset(&rx);
    const char *why = NULL;
    cr_expect_eq(pl_proto_rx_want(&rx), PL_PROTO_HDR);
    cr_expect_eq(pl_proto_rx_got(&rx, PL_PROTO_HDR + 1, &why), -EOVERFLOW);
    cr_expect_eq(rx.have, 0u);
}
