/* snap_stack.h - one stack of a SNAP_STACKS record (common/proto.h) to and
 * from its varints. Header-only, shared by the agent (writes) and the cli
 * (reads, and checks everything: the bytes come from the socket). */
#ifndef HI_COMMON_SNAP_STACK_H
#define HI_COMMON_SNAP_STACK_H

#include <string.h>

#include "common/proto.h"
#include "common/varint.h"

#define HI_SNAP_STACK_MAX (HI_SNAP_STACK_FIELDS * HI_VARINT_MAX) /* bytes of one stack, at most */

/* Writes the stack at p (room for HI_SNAP_STACK_MAX bytes); its length. */
static inline size_t hi_snap_stack_put(uint8_t *p, const struct hi_snap_bucket *b, uint32_t node, uint32_t kind)
{
    size_t n = 0;
    n += hi_varint_put(p + n, node);
    n += hi_varint_put(p + n, b->nframes);
    n += hi_varint_put(p + n, kind);
    n += hi_varint_put(p + n, hi_zigzag(b->first_tid));
    const uint64_t v[10] = { b->raw_live_bytes, b->raw_live_objects, b->raw_alloc_bytes, b->raw_alloc_objects,
                             b->est_live_bytes, b->est_live_objects, b->est_alloc_bytes, b->est_alloc_objects,
                             b->oldest_live_ns, b->live_age_sum_ms };
    for (unsigned i = 0; i < 10; i++)
        n += hi_varint_put(p + n, v[i]);
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        n += hi_varint_put(p + n, hi_zigzag(b->growth[g]));
    return n;
}

/* Reads one stack from [*p, end) and advances *p. 0, or -1 when the bytes
 * end inside it, a varint is malformed, or node, nframes, kind or first_tid
 * do not fit their fields (ranges beyond that are the caller's to check). */
static inline int hi_snap_stack_get(const uint8_t **p, const uint8_t *end, struct hi_snap_bucket *b, uint32_t *node,
                                    uint32_t *kind)
{
    uint64_t f[HI_SNAP_STACK_FIELDS];
    const uint8_t *q = *p;
    for (unsigned i = 0; i < HI_SNAP_STACK_FIELDS; i++)
        if (hi_varint_get(&q, end, &f[i]) < 0)
            return -1;
    int64_t tid = hi_unzigzag(f[3]);
    if (f[0] > UINT32_MAX || f[1] > UINT32_MAX || f[2] > UINT32_MAX || tid < INT32_MIN || tid > INT32_MAX)
        return -1;
    memset(b, 0, sizeof(*b));
    *node = (uint32_t)f[0];
    b->nframes = (uint32_t)f[1];
    *kind = (uint32_t)f[2];
    b->first_tid = (int32_t)tid;
    b->raw_live_bytes = f[4];
    b->raw_live_objects = f[5];
    b->raw_alloc_bytes = f[6];
    b->raw_alloc_objects = f[7];
    b->est_live_bytes = f[8];
    b->est_live_objects = f[9];
    b->est_alloc_bytes = f[10];
    b->est_alloc_objects = f[11];
    b->oldest_live_ns = f[12];
    b->live_age_sum_ms = f[13];
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        b->growth[g] = hi_unzigzag(f[14 + g]);
    *p = q;
    return 0;
}

#endif /* HI_COMMON_SNAP_STACK_H */
