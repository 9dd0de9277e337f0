/* leave.h - what the payload's own libraries leave in the target after detach.
 *
 * libheapinject.so stays loaded after detach (-z nodelete: a hook still
 * running on another thread never meets unmapped code), and so do the
 * libraries our dlopen brought in with it (libm, in a process that did
 * not have it). What made a detached target differ from before attach
 * (issue 12, measured by e2e rel_footprint):
 *
 * - libunwind 1.6, which the payload linked until issue 17, opened a pipe
 *   at its first unwind and kept its 2 descriptors for good. The payload
 *   now walks stacks with its own CFI walker (stack.c) and brings no
 *   libunwind: no pipe, and 2 libraries fewer loaded into the target.
 * - The pages of their code and read-only data the session touched stay
 *   in the target's RSS (~600 KiB). Detach drops them with MADV_DONTNEED:
 *   for a private file mapping that was never written this only unmaps
 *   the pages (a later call faults them back from the page cache), so it
 *   is safe even for code another thread is running. Never applied to a
 *   writable segment, to PT_GNU_RELRO (relocated, then made read-only: its
 *   pages hold private data), or to a module with text relocations.
 */
#ifndef HI_PAYLOAD_LEAVE_H
#define HI_PAYLOAD_LEAVE_H

/* Once, at the first start: remembers libheapinject.so and the modules
 * that came with it (after it in the link map). Returns how many. */
int pl_leave_init(void);

/* At detach, after every table is released: drops the untouched-by-writes
 * file pages of libheapinject.so and of the modules pl_leave_init found.
 * Returns the bytes advised away. */
unsigned long pl_leave_release_text(void);

#endif /* HI_PAYLOAD_LEAVE_H */
