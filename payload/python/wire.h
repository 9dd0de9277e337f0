/* wire.h - the snapshot's Python records (common/proto.h: SNAP_PYTHON,
 * SNAP_PYCODE), for a cli that asked for runtime frames, and a stack's
 * native frames alone for one that did not (issue 29). Agent thread. */
#ifndef HI_PAYLOAD_PYTHON_WIRE_H
#define HI_PAYLOAD_PYTHON_WIRE_H

#include <stdint.h>

#include "payload/sys/sys.h"

/* SNAP_PYTHON, then every code copied so far as SNAP_PYCODE records
 * (many to a record; buf: scratch of len bytes). Nothing when the process
 * is not Python. 0 or the first send error. */
int pl_py_send(pl_send_fn send, void *ctx, unsigned char *buf, uint32_t len);

/* pcs[0..n) without its frames of kinds other than native, into out
 * (room for n): their count. */
uint32_t pl_py_native_only(const uintptr_t *pcs, uint32_t n, uintptr_t *out);

#endif /* HI_PAYLOAD_PYTHON_WIRE_H */
