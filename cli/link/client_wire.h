/* client_wire.h - what the transport (client.c) shares with the decoders of
 * each message family (client_stacks.c, client_census.c, client_memory.c,
 * client_ticks.c). Internal to cli/link/client*.c. */
#ifndef HI_CLI_LINK_CLIENT_WIRE_H
#define HI_CLI_LINK_CLIENT_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/link/client.h"
#include "common/proto.h"

/* Ends every message about a bound the agent went past: a real agent stays
 * well inside them (client.h), so the peer is probably not one. */
#define PAST_BOUND " (a heapinject profiler never sends that much: is the socket served by something else?)"

/* The name of a message type, NULL for an unknown one. */
const char *cli_client_type_name(unsigned type);

/* Records what went wrong in c->error and returns err; after a framing
 * error or a lost connection the client is broken. */
__attribute__((format(printf, 3, 4)))
int cli_client_fail(struct cli_client *c, int err, const char *fmt, ...);

int64_t cli_client_now_ms(void);

/* Waits up to timeout_ms for something to read: what is buffered counts.
 * 1, 0 (nothing) or -errno. */
int cli_client_wait_readable(struct cli_client *c, int timeout_ms);

/* Sends one request (header and body in one write). */
int cli_client_send(struct cli_client *c, uint16_t type, const void *body, uint32_t len);

/* Reads one message into h and c->buf (TICK, SNAP_PUSH and ERROR handled
 * on the way; see client.c). */
int cli_client_recv(struct cli_client *c, struct hi_msg_header *h, int timeout_ms, bool want_tick);

/* Reads the next message, which must be of type `want` with a body of
 * exactly `len` bytes (copied to out when out != NULL). */
int cli_client_expect(struct cli_client *c, uint16_t want, void *out, uint32_t len);

/* NUL-terminates a fixed string from the wire and blanks control characters. */
void cli_client_clean_string(char *s, size_t len);

/* client_ticks.c: stores one TICK. */
int cli_client_store_tick(struct cli_client *c, const struct hi_tick *t, const struct hi_tick_top *top,
                          const struct hi_tick_kept *kept);

/* client_stacks.c: reads the snapshot a SNAP_PUSH (body in c->buf)
 * announces and keeps it; drops the one kept. */
int cli_client_recv_pushed(struct cli_client *c, uint32_t len);
void cli_client_drop_pushed(struct cli_client *c);

#endif /* HI_CLI_LINK_CLIENT_WIRE_H */
