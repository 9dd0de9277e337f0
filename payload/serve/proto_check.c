/* proto_check.c - framing and validation of client requests (pure). */
#include "payload/serve/proto_check.h"

#include <errno.h>
#include <string.h>

/* Minimum body length of a request type, or -1 if not a request. */
static int request_min_len(uint16_t type)
{
    switch (type) {
    case HI_MSG_HELLO: return (int)sizeof(struct hi_hello_client);
    case HI_MSG_SET_RATE: return (int)sizeof(struct hi_set_rate);
    case HI_MSG_SNAPSHOT_REQ:
    case HI_MSG_WATCH:
    case HI_MSG_DETACH:
    case HI_MSG_OWN_SESSION:
    case HI_MSG_ALLOC_STATS_REQ:
    case HI_MSG_TRIM_REQ:
    case HI_MSG_CENSUS_REQ:
    case HI_MSG_CENSUS_PREP: return 0;
    case HI_MSG_CENSUS_REGS: return (int)sizeof(struct hi_census_regs);
    default: return -1;
    }
}

int pl_proto_check_header(const struct hi_msg_header *h, const char **why)
{
    if (h->magic != HI_PROTO_MAGIC) {
        *why = "bad magic: not a heapinject client";
        return -EPROTO;
    }
    if (h->version != HI_PROTO_VERSION) {
        *why = "protocol version mismatch: update heapinject";
        return -EPROTONOSUPPORT;
    }
    int min = request_min_len(h->type);
    if (min < 0) {
        *why = "unknown message type";
        return -EPROTO;
    }
    if (h->length > HI_MAX_REQUEST_BODY || h->length < (uint32_t)min) {
        *why = "bad message length";
        return -EMSGSIZE;
    }
    return 0;
}

int pl_proto_check_request(const struct hi_msg_header *h, const unsigned char *body, bool hello_done,
                           const char **why)
{
    if (h->type == HI_MSG_HELLO) {
        struct hi_hello_client hc;
        memcpy(&hc, body, sizeof(hc));
        if (hc.version != HI_PROTO_VERSION) {
            *why = "protocol version mismatch: update heapinject";
            return -EPROTONOSUPPORT;
        }
        return 0;
    }
    if (!hello_done) {
        *why = "HELLO must come first";
        return -EPROTO;
    }
    if (h->type == HI_MSG_CENSUS_REGS && (h->length % sizeof(struct hi_census_regs) != 0 ||
                                          h->length / sizeof(struct hi_census_regs) > HI_CENSUS_REGS_PER_MSG)) {
        *why = "CENSUS_REGS is a whole number of threads' registers";
        return -EPROTO;
    }
    if (h->type == HI_MSG_SET_RATE) {
        struct hi_set_rate r;
        memcpy(&r, body, sizeof(r));
        if (r.rate < 1 || r.rate > PL_PROTO_MAX_RATE) {
            *why = "rate must be between 1 and 2^40 bytes";
            return -EINVAL;
        }
    }
    return 0;
}

void pl_proto_rx_reset(struct pl_proto_rx *rx)
{
    rx->have = 0;
}

uint32_t pl_proto_rx_want(const struct pl_proto_rx *rx)
{
    if (rx->have < PL_PROTO_HDR)
        return PL_PROTO_HDR - rx->have;
    struct hi_msg_header h;
    memcpy(&h, rx->buf, PL_PROTO_HDR);
    /* The header was checked when it completed: length is bounded. */
    return PL_PROTO_HDR + h.length - rx->have;
}

int pl_proto_rx_got(struct pl_proto_rx *rx, uint32_t n, const char **why)
{
    struct hi_msg_header h;
    uint32_t before = rx->have;

    if (n > pl_proto_rx_want(rx)) {
        *why = "internal: read past the message";
        return -EOVERFLOW;
    }
    rx->have += n;
    if (rx->have < PL_PROTO_HDR)
        return PL_RX_MORE;
    memcpy(&h, rx->buf, PL_PROTO_HDR);
    if (before < PL_PROTO_HDR) {
        int err = pl_proto_check_header(&h, why);
        if (err)
            return err;
    }
    return rx->have == PL_PROTO_HDR + h.length ? PL_RX_MESSAGE : PL_RX_MORE;
}
