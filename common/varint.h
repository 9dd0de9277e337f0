/* varint.h - LEB128 varints of the wire format (common/proto.h's
 * SNAP_STACKS): 7 bits a byte, low first, high bit set on all but the
 * last; signed values zigzag-encoded. Header-only: the payload and the cli
 * each compile their own copy. */
#ifndef HI_COMMON_VARINT_H
#define HI_COMMON_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define HI_VARINT_MAX 10u /* bytes of the longest uint64_t */

/* Writes v at p (room for HI_VARINT_MAX bytes); returns the bytes written. */
static inline size_t hi_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads a varint from [*p, end) into *v and advances *p. 0, or -1 when the
 * bytes end first or it does not fit 64 bits (then *p is unchanged). */
static inline int hi_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    const uint8_t *q = *p;
    for (unsigned shift = 0; q < end && shift < 64; shift += 7) {
        uint8_t b = *q++;
        if (shift == 63 && b > 1)
            return -1; /* bits past 64 */
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            *p = q;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t hi_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t hi_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif /* HI_COMMON_VARINT_H */
