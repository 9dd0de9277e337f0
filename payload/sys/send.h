/* send.h - how the payload's records leave: a function the agent gives
 * (it knows the socket; the snapshot and the census do not). */
#ifndef HI_PAYLOAD_SEND_H
#define HI_PAYLOAD_SEND_H

#include <stdint.h>

/* Sends one message; 0 or -errno (then the sender stops). */
typedef int (*pl_send_fn)(void *ctx, uint16_t type, const void *body, uint32_t len);

#endif /* HI_PAYLOAD_SEND_H */
