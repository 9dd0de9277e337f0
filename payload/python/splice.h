/* splice.h - a sample's Python frames put among its native frames, where
 * the interpreter's eval loop runs them (issue 29 item 1; docs/DESIGN-
 * NOTES.md, "Python frames in samples"): above each native frame of
 * _PyEval_EvalFrameDefault come the Python frames that activation runs,
 * innermost first, up to and including its entry frame. The result is one
 * stack of frame words (common/proto.h: hi_frame_python for a Python
 * frame), so two Python lines make two stacks. */
#ifndef HI_PAYLOAD_PYTHON_SPLICE_H
#define HI_PAYLOAD_PYTHON_SPLICE_H

#include <stdint.h>

#include "payload/python/walk.h"

/* native: n_native return addresses, innermost first; py: n_py frames,
 * innermost first, with ids[i] their code entries (0: a miss, the frame is
 * kept with id 0, so the stack keeps its shape). eval_lo/eval_hi: the eval
 * loop's code. Writes at most max words to out: their count; *placed: how
 * many Python frames went in. Python frames left when the native frames
 * end (a native walk cut short) or at max are left out. */
unsigned pl_py_splice(const uint64_t *native, unsigned n_native, const struct pl_py_frame *py, const uint32_t *ids,
                      unsigned n_py, uintptr_t eval_lo, uintptr_t eval_hi, uint64_t *out, unsigned max,
                      unsigned *placed);

#endif /* HI_PAYLOAD_PYTHON_SPLICE_H */
