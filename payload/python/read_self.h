/* read_self.h - the walker's reader inside the target (walk.h): reads of
 * the process's own memory that fail instead of faulting.
 *
 * Each page is asked of the kernel once (pl_mem_readable, no descriptor,
 * no errno, no signal) before it is copied; the last eight pages asked are
 * remembered, as a chain's frames and code objects sit on few pages
 * (22 frames: 3 us on 3.11 and 3.13; 4.5 us on 3.8, whose frame objects
 * spread over more pages: 19 us with only two pages remembered).
 * Safe against a page unmapped between the question and the copy only
 * because what is read is the calling thread's own chain: its frames and
 * the code objects they hold cannot be freed while the thread runs C code
 * below them (the allocation being sampled). */
#ifndef HI_PAYLOAD_PYTHON_READ_SELF_H
#define HI_PAYLOAD_PYTHON_READ_SELF_H

#include <stddef.h>
#include <stdint.h>

struct pl_py_self_pages {
    uintptr_t page[8];
    unsigned next;
};

/* A pl_py_reader.read; ctx is a struct pl_py_self_pages, zeroed first. */
int pl_py_read_self(void *ctx, uintptr_t addr, void *out, size_t len);

#endif /* HI_PAYLOAD_PYTHON_READ_SELF_H */
