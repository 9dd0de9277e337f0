/* python.h - what record/, census/ and serve/ may include of python/
 * (check_payload_layers.py): the CPython in the target found (runtime.h),
 * a sampled thread's Python frames (sample.h) and their records on the
 * wire (wire.h). */
#ifndef HI_PAYLOAD_PYTHON_PYTHON_H
#define HI_PAYLOAD_PYTHON_PYTHON_H

#include "payload/python/runtime.h" /* the runtime found, the frame walk */
#include "payload/python/sample.h"  /* frames at sample time, their counts */
#include "payload/python/wire.h"    /* SNAP_PYTHON and SNAP_PYCODE */

#endif /* HI_PAYLOAD_PYTHON_PYTHON_H */
