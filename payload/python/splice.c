/* splice.c - Python frames among native ones (splice.h). */
#include "payload/python/splice.h"

#include "common/proto.h"

unsigned pl_py_splice(const uint64_t *native, unsigned n_native, const struct pl_py_frame *py, const uint32_t *ids,
                      unsigned n_py, uintptr_t eval_lo, uintptr_t eval_hi, uint64_t *out, unsigned max, unsigned *placed)
{
    unsigned n = 0, p = 0;
    for (unsigned i = 0; i < n_native && n < max; i++) {
        /* A return address: the call lies just before it. */
        uint64_t pc = native[i] - 1;
        if (pc >= eval_lo && pc < eval_hi) {
            while (p < n_py && n < max) {
                int last = py[p].entry;
                out[n++] = hi_frame_python(ids[p], py[p].instr);
                p++;
                if (last)
                    break;
            }
            if (n >= max)
                break;
        }
        out[n++] = native[i];
    }
    *placed = p;
    return n;
}
