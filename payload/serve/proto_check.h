/* proto_check.h - the agent's decoder of client requests (common/proto.h):
 * framing of the byte stream and validation of each request, as pure
 * functions (no socket, no session state), so that they can be fuzzed
 * (fuzz/fuzz_agent_request.c) and reasoned about on their own.
 *
 * Every verdict comes with a code (negative errno) and a fixed message for
 * the ERROR reply; a request that passes pl_proto_check_request may be
 * acted on with no further checks.
 */
#ifndef HI_PAYLOAD_PROTO_CHECK_H
#define HI_PAYLOAD_PROTO_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "common/proto.h"

#define PL_PROTO_HDR ((uint32_t)sizeof(struct hi_msg_header))
#define PL_PROTO_MAX_RATE HI_MAX_RATE

/* One connection's partial request. */
struct pl_proto_rx {
    uint32_t have;  /* bytes of the current message in buf */
    unsigned char buf[sizeof(struct hi_msg_header) + HI_MAX_REQUEST_BODY];
};

enum {
    PL_RX_MORE = 0,     /* the message is not complete yet */
    PL_RX_MESSAGE = 1,  /* buf holds one whole message: act, then reset */
};

/* Empties rx (between messages). */
void pl_proto_rx_reset(struct pl_proto_rx *rx);

/* How many bytes the next read may put at rx->buf + rx->have: never past
 * the end of the current message, so requests that follow stay unread. */
uint32_t pl_proto_rx_want(const struct pl_proto_rx *rx);

/* Accounts n (<= pl_proto_rx_want) bytes just read into rx->buf+rx->have.
 * Checks the header as soon as it is complete. Returns PL_RX_MORE,
 * PL_RX_MESSAGE, or a negative errno with *why set: the connection must
 * then be failed with that code and message. */
int pl_proto_rx_got(struct pl_proto_rx *rx, uint32_t n, const char **why);

/* Checks a header: magic, version, a known request type, and a body length
 * within [minimum for the type, HI_MAX_REQUEST_BODY]. 0 or -errno + why. */
int pl_proto_check_header(const struct hi_msg_header *h, const char **why);

/* Checks a whole request (header already checked) for a connection that
 * has (hello_done) or has not yet exchanged HELLO: the order, and the
 * values in the body. 0 or -errno + why. */
int pl_proto_check_request(const struct hi_msg_header *h, const unsigned char *body, bool hello_done,
                           const char **why);

#endif /* HI_PAYLOAD_PROTO_CHECK_H */
