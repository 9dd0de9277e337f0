/* leave.h - what the payload's own libraries leave in the target after detach.
 *
 * libheapinject.so stays loaded after detach (-z nodelete: a hook still
 * running on another thread never meets unmapped code), and so do the
 * libraries our dlopen brought in with it (libunwind, liblzma, libm, in a
 * process that did not have them). Two things made a detached target
 * differ from before attach (issue 12, measured by e2e rel_footprint):
 *
 * - libunwind 1.6 opens a pipe at its first unwind to test addresses
 *   before reading them (x86_64/Ginit.c: mem_validate_pipe; newer versions
 *   one per thread) and keeps it for the life of the process: 2 descriptors
 *   of the target's, for good. Closing them at detach is not safe: libunwind
 *   keeps the numbers, and a later unwind would read and write whatever
 *   the target opened under them. So the pipe is never opened: when
 *   libunwind came with us, its pipe2/pipe slots call a function that fails
 *   (EMFILE), which libunwind takes as "address not known valid". It only
 *   asks when DWARF has no rule for a frame (its frame-chain guess): that
 *   stack ends there instead of guessing on.
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

/* Once, at the first start, before any unwind: remembers the modules that
 * came with libheapinject.so (after it in the link map) and quiets
 * libunwind's pipe if libunwind is one of them. Returns how many libunwind
 * slots were redirected (0 when libunwind was the target's already). */
int pl_leave_init(void);

/* At detach, after every table is released: drops the untouched-by-writes
 * file pages of libheapinject.so and of the modules pl_leave_init found.
 * Returns the bytes advised away. */
unsigned long pl_leave_release_text(void);

#endif /* HI_PAYLOAD_LEAVE_H */
