/* census_types.h - what the agent hands the census child, and what the
 * child fills in.
 *
 * The agent prepares `struct pl_census_in` (module ranges from
 * dl_iterate_phdr, thread stack pointers, glibc's own totals) before the
 * fork, so the child, which may only make raw system calls, finds it in
 * its copy. The child answers in `struct pl_census_out`, a MAP_SHARED
 * mapping both see. */
#ifndef HI_PAYLOAD_CENSUS_TYPES_H
#define HI_PAYLOAD_CENSUS_TYPES_H

#include <stdint.h>

#include "common/proto.h"
#include "payload/census/python.h"

struct pl_uncopied;      /* census_uncopied.h */
struct pl_kernel_words; /* census_kernel.h */

#define PL_CENSUS_MAX_RANGES 2048u
/* Threads a census lists and holds (their registers): 4096 held a
 * 10,001-thread process's others running (issue 25). The tables are in
 * an anonymous mapping: only the pages of the threads there are touched
 * (~320 bytes a thread). */
#define PL_CENSUS_MAX_THREADS 32768u
#define PL_CENSUS_MAX_ROOTS 8192u
#define PL_CENSUS_OUT_BYTES (32u << 20)

struct pl_census_range {
    uintptr_t lo, hi;
};

struct pl_census_thread {
    int32_t tid;
    uint32_t has_sp;
    uintptr_t sp;
    uint32_t has_regs;                /* read by the cli with ptrace */
    uintptr_t tp;                     /* thread pointer (fs_base), with regs */
    uintptr_t gpr[HI_CENSUS_GPRS];
    char name[HI_THREAD_NAME_LEN];
};

/* A thread's name, read at PREP, before the threads are held. */
struct pl_census_name {
    int32_t tid;
    char name[HI_THREAD_NAME_LEN];
};

struct pl_census_in {
    /* glibc's writable data (.data, .bss): main_arena is found there */
    struct pl_census_range libc_data[8];
    unsigned n_libc_data;
    /* writable PT_LOAD segments of every module but ours: global roots */
    struct pl_census_range globals[PL_CENSUS_MAX_RANGES];
    unsigned n_globals;
    /* every PT_LOAD segment of every module: a first word pointing here
     * names the block's type (a vtable) */
    struct pl_census_range images[PL_CENSUS_MAX_RANGES];
    unsigned n_images;
    /* the profiler's own memory: never a root, never a block */
    struct pl_census_range exclude[64];
    /* the agent thread's stack, around its stack pointer at prepare: the
     * copy runs on its copy of it, so its words are the census's own
     * (stale pointers there made blocks of g_list 'shared'); the child
     * clips it to the mapping that holds it */
    struct pl_census_range agent_stack;
    unsigned n_exclude;
    /* the agent thread's dtv (its TCB's second word): glibc calloc'ed it
     * for our thread, in the program's heap; the census's own, no block
     * of the program's (0: not known) */
    uintptr_t agent_dtv;
    struct pl_census_thread threads[PL_CENSUS_MAX_THREADS];
    unsigned n_threads;
    unsigned n_threads_unlisted; /* seen past the table: counted, not scanned as threads */
    /* registers the cli sent (CENSUS_REGS), merged into threads by tid */
    struct hi_census_regs regs[PL_CENSUS_MAX_THREADS];
    /* the threads' names, read at PREP and sorted by tid: reading each
     * thread's comm after REQ, while the cli held them, cost 10,001
     * open/read/close calls of the hold */
    struct pl_census_name names[PL_CENSUS_MAX_THREADS];
    unsigned n_names;
    unsigned n_regs;
    /* A thread's static TLS and its TCB, relative to its thread pointer:
     * [tp + tls_lo, tp + tls_hi) (x86_64 puts static TLS below the TCB;
     * the offsets are the same in every thread). tls_lo == tls_hi: none. */
    intptr_t tls_lo, tls_hi;
    /* from libc's debug information (CENSUS_PREP), when the cli found it */
    struct hi_census_layout layout;
    uint32_t have_layout;
    uint64_t mallinfo_free, mallinfo_mmapped;
    uint64_t timeout_ns;
    /* MAP_SHARED: filled by the agent after the fork (census_uncopied.h);
     * NULL: none could be made */
    struct pl_uncopied *uncopied;
    /* MAP_PRIVATE, untouched until the child fills its copy before it
     * closes the descriptors (census_kernel.h); NULL: none */
    struct pl_kernel_words *kernel;
    /* a CPython process's interpreter (pycensus.h); type_type 0: none */
    struct pl_py_in py;
};

struct pl_census_out {
    struct hi_census_end end;
    uint32_t n_roots, n_groups;
    struct hi_census_root roots[PL_CENSUS_MAX_ROOTS];
    struct pl_py_out py; /* when in->py.type_type */
    struct hi_census_group groups[]; /* to the end of PL_CENSUS_OUT_BYTES */
};

#define PL_CENSUS_MAX_GROUPS \
    ((PL_CENSUS_OUT_BYTES - sizeof(struct pl_census_out)) / sizeof(struct hi_census_group))

/* Runs in the child: fills out (out->end.status < 0 with why on failure). */
void pl_census_child(const struct pl_census_in *in, struct pl_census_out *out);

#endif /* HI_PAYLOAD_CENSUS_TYPES_H */
