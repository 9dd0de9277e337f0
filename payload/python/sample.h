/* sample.h - a sampled stack's Python frames, read at sample time and put
 * among its native frames (issue 29 items 1 and 5; docs/DESIGN-NOTES.md,
 * "Python frames in samples").
 *
 * pl_py_sample_init runs once at start (before any slot is patched, so
 * the hooks read what it wrote without a barrier): it finds the
 * interpreter (python.h) and the eval loop's code range; each session
 * maps the code table and its end unmaps it. pl_py_sample_splice runs on the sampled path only, in the
 * sampling thread: when the thread holds Python state it reads the
 * thread's own chain (checked reads), names each code (codes.h: copied at
 * first sight), turns each position into a line, and splices the Python
 * frames before the eval loop's native frames (splice.h). Unsampled calls
 * never come here; a process that is not Python pays one branch a sample.
 * A chain that does not validate leaves the stack native and is counted. */
#ifndef HI_PAYLOAD_PYTHON_SAMPLE_H
#define HI_PAYLOAD_PYTHON_SAMPLE_H

#include <stdint.h>

#include "common/proto.h"
#include "payload/python/codes.h"
#include "payload/python/runtime.h"

/* Start: finds the interpreter and its eval loop. */
void pl_py_sample_init(void);

/* Sampled path: pcs[0..n) native return addresses, innermost first, room
 * for max words. Rewritten in place with the Python frames spliced in:
 * the new count (n when the thread runs no Python code). */
uint32_t pl_py_sample_splice(uintptr_t *pcs, uint32_t n, uint32_t max);

/* Start of a session (hooks not armed yet): the counts start from 0, the
 * code table is mapped (a table left by a release that gave up is kept). */
void pl_py_sample_new_session(void);

/* The session's agent has exited (hooks only forward): frames are no
 * longer read, and once no hook is inside the code table it is unmapped,
 * so that detach leaves no mapping of ours (waits at most 2 s for a hook
 * still in it: -1, the table stays mapped). 0. */
int pl_py_sample_release(void);

/* In a fork child, before anything else runs there (the forking thread is
 * its only thread): the parent's threads inside the table do not exist
 * here, so the users count starts from 0; without following (follow 0)
 * frames are no longer read and the table's mapping, the parent's pages
 * shared until written, is unmapped, so that no mapping of ours stays in
 * a worker for its whole life. */
void pl_py_sample_atfork_child(int follow);

/* Agent thread: the session's Python state and counts for SNAP_PYTHON. */
void pl_py_sample_report(struct hi_snap_python *out);

/* Agent thread: the code table (entries filled so far), or NULL. */
const struct pl_py_codes *pl_py_sample_codes(void);

#endif /* HI_PAYLOAD_PYTHON_SAMPLE_H */
