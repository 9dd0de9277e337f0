/* fuzz_agent_request.c - libFuzzer harness for the agent's request decoder
 * (payload/proto_check.c): the byte stream a client sends, cut into reads
 * of the sizes the first bytes choose, framed by pl_proto_rx and judged by
 * pl_proto_check_request with the HELLO state the agent keeps.
 *
 * Invariants checked (abort on violation): a read never goes past the
 * current message; a message handed out has a valid header and a body
 * within bounds; a verdict always carries a message; a connection stops at
 * the first error, as the agent closes it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "payload/serve/proto_check.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s\n", #x); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pl_proto_rx rx;
    size_t pos = 0, cut = 0;
    int hello = 0;

    /* First 4 bytes: the read sizes (1..64 bytes, or "as much as wanted"). */
    uint8_t sizes[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 4 && pos < size; i++)
        sizes[i] = data[pos++];
    pl_proto_rx_reset(&rx);
    while (pos < size) {
        uint32_t want = pl_proto_rx_want(&rx);
        CHECK(want >= 1 && rx.have + want <= sizeof(rx.buf));
        uint32_t n = sizes[cut++ % 4] & 63;
        if (n == 0 || n > want)
            n = want;
        if (n > size - pos)
            n = (uint32_t)(size - pos);
        memcpy(rx.buf + rx.have, data + pos, n);
        pos += n;
        const char *why = NULL;
        int v = pl_proto_rx_got(&rx, n, &why);
        if (v < 0) {
            CHECK(why && why[0]);
            return 0; /* the agent fails the connection */
        }
        if (v == PL_RX_MORE)
            continue;
        CHECK(v == PL_RX_MESSAGE);
        struct hi_msg_header h;
        memcpy(&h, rx.buf, sizeof(h));
        CHECK(h.magic == HI_PROTO_MAGIC && h.version == HI_PROTO_VERSION);
        CHECK(h.length <= HI_MAX_REQUEST_BODY && rx.have == sizeof(h) + h.length);
        why = NULL;
        int err = pl_proto_check_request(&h, rx.buf + sizeof(h), hello, &why);
        if (err) {
            CHECK(err < 0 && why && why[0]);
            return 0;
        }
        if (h.type == HI_MSG_HELLO)
            hello = 1;
        if (h.type == HI_MSG_SET_RATE) {
            struct hi_set_rate r;
            memcpy(&r, rx.buf + sizeof(h), sizeof(r));
            CHECK(r.rate >= 1 && r.rate <= PL_PROTO_MAX_RATE);
        }
        CHECK(hello);
        pl_proto_rx_reset(&rx);
    }
    return 0;
}
