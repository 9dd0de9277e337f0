/* alloc.h - pymalloc's objects sampled (issue 29 item 2; docs/DESIGN-NOTES.md,
 * "pymalloc's objects sampled").
 *
 * CPython serves objects and small blocks (1 to 512 bytes) from its own
 * pools inside 256 KiB / 1 MiB arenas that it maps with mmap: the malloc
 * hooks never see them, the mmap hooks see only the arenas. Python's
 * allocator API lets a program put its own functions in front of a domain
 * (PyMem_GetAllocator/PyMem_SetAllocator): heapinject puts a transparent
 * wrapper in front of the MEM and OBJ domains, with the GIL held, that
 * forwards every call to the allocator that was there and samples the
 * blocks pymalloc itself served with the same per-thread Poisson
 * countdown as malloc, as stacks of kind HI_KIND_PYMALLOC. Blocks pymalloc
 * hands on to malloc (over 512 bytes, 0 bytes) are left to the malloc
 * hooks: each block is counted by one view. The arenas stay stacks of kind
 * mmap: the pymalloc stacks are the objects inside them (the report says
 * so and does not add the two).
 *
 * alloc.c holds the wrappers (any thread that holds the GIL),
 * alloc_install.c the installing and the restoring (the agent thread and a
 * thread of ours that takes the GIL). */
#ifndef HI_PAYLOAD_PYTHON_ALLOC_H
#define HI_PAYLOAD_PYTHON_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

/* PyMemAllocatorEx, as Include/cpython/pymem.h has it since 3.5. */
struct pl_pym_allocator {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr);
};

/* PyMemAllocatorDomain */
enum { PL_PYM_DOMAIN_RAW = 0, PL_PYM_DOMAIN_MEM = 1, PL_PYM_DOMAIN_OBJ = 2 };

/* The wrapper of one domain: what it forwards to. `old` is written before
 * the wrapper is installed and never again while it may be called (a
 * wrapper still reached after it was taken out, by a caller that had read
 * the domain before, forwards to the same old allocator; the payload is
 * never unloaded). */
struct pl_pym_domain {
    struct pl_pym_allocator old;
};

/* The MEM and OBJ wrappers. */
extern struct pl_pym_domain pl_pym_mem, pl_pym_obj;

/* The allocator to install for a domain (ctx is &pl_pym_mem or
 * &pl_pym_obj, whose `old` must be filled first). */
struct pl_pym_allocator pl_pymalloc_wrapper(struct pl_pym_domain *d);

/* Agent thread, at the session's start: looks for CPython, and if found
 * starts a thread that takes the GIL and installs the wrappers. Returns at
 * once; pl_pymalloc_poll follows it. */
/* wanted: the session asked for it (config pymalloc=1); otherwise a
 * Python process only gets the line saying how to ask. */
void pl_pymalloc_start(bool wanted);

/* Agent thread, each turn of its loop: gives up an install that has not
 * had the GIL within its bound (PL_PYM_GIL_WAIT_MS). */
void pl_pymalloc_poll(void);

/* Agent thread, at the session's end (hooks already off): an install not
 * yet done is given up; installed wrappers are taken out with the GIL
 * held, waited for up to PL_PYM_GIL_WAIT_MS (then the restore stays
 * pending: it runs when the GIL comes, and the wrappers only forward
 * meanwhile). */
void pl_pymalloc_stop(void);

#define PL_PYM_GIL_WAIT_MS 2000

/* In a fork child: the GIL thread is not there (its job is forgotten; the
 * child's wrappers, if in, only forward until a session of its own). */
void pl_pymalloc_atfork_child(void);

/* Where it stands, for a snapshot: 0 when the process is not Python (no
 * record sent), else out filled. */
int pl_pymalloc_state(struct hi_snap_pymalloc *out);

#endif /* HI_PAYLOAD_PYTHON_ALLOC_H */
