/* fmt.h - bounded text building without stdio (payload rule: no stdio).
 * A pl_buf never overflows; it is always NUL-terminated when len > 0. */
#ifndef HI_PAYLOAD_FMT_H
#define HI_PAYLOAD_FMT_H

#include <stddef.h>
#include <stdint.h>

struct pl_buf {
    char *p;
    size_t len; /* capacity including the NUL */
    size_t pos;
};

void pl_buf_init(struct pl_buf *b, char *p, size_t len);
void pl_buf_str(struct pl_buf *b, const char *s);
void pl_buf_u64(struct pl_buf *b, uint64_t v);
void pl_buf_hex(struct pl_buf *b, uint64_t v); /* 0x... */

#endif /* HI_PAYLOAD_FMT_H */
