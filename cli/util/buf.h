/* buf.h - a growable byte buffer, and writing one to a stream. */
#ifndef HI_CLI_UTIL_BUF_H
#define HI_CLI_UTIL_BUF_H

#include <stddef.h>
#include <stdio.h>

/* A growable byte buffer (owned; free(b->data)). Appends return 0 or -ENOMEM. */
struct cli_buf {
    char *data;
    size_t len, cap;
};
int cli_buf_add(struct cli_buf *b, const void *data, size_t len);
int cli_buf_addf(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_buf_addc(struct cli_buf *b, char c);

/* Writes the buffer to out; 0 or -EIO. */
int cli_buf_write_all(FILE *out, const void *data, size_t len);

#endif /* HI_CLI_UTIL_BUF_H */
