/* fmt.c - bounded string building. */
#include "payload/sys/fmt.h"

void pl_buf_init(struct pl_buf *b, char *p, size_t len)
{
    b->p = p;
    b->len = len;
    b->pos = 0;
    if (len)
        p[0] = '\0';
}

static void put(struct pl_buf *b, char c)
{
    if (b->pos + 1 < b->len) {
        b->p[b->pos++] = c;
        b->p[b->pos] = '\0';
    }
}

void pl_buf_str(struct pl_buf *b, const char *s)
{
    while (*s)
        put(b, *s++);
}

void pl_buf_u64(struct pl_buf *b, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put(b, d[--n]);
}

void pl_buf_hex(struct pl_buf *b, uint64_t v)
{
    char d[16];
    int n = 0;
    do {
        d[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    put(b, '0');
    put(b, 'x');
    while (n)
        put(b, d[--n]);
}
