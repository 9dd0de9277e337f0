/* buf.c - a growable byte buffer, and writing one to a stream. */
#include "cli/util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int buf_reserve(struct cli_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + extra + 1)
        nc *= 2;
    char *nd = realloc(b->data, nc);
    if (!nd)
        return -ENOMEM;
    b->data = nd;
    b->cap = nc;
    return 0;
}

int cli_buf_add(struct cli_buf *b, const void *data, size_t len)
{
    if (buf_reserve(b, len))
        return -ENOMEM;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int cli_buf_addc(struct cli_buf *b, char c)
{
    return cli_buf_add(b, &c, 1);
}

int cli_buf_addf(struct cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return -EINVAL;
    if (buf_reserve(b, (size_t)need))
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
    return 0;
}

int cli_buf_write_all(FILE *out, const void *data, size_t len)
{
    if (len && fwrite(data, 1, len, out) != len)
        return -EIO;
    return 0;
}
