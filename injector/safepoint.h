/* safepoint.h - is it safe to call dlopen on this stopped thread now?
 * Not when any of its frames is inside the allocator, the dynamic linker or
 * a signal handler on an alternate signal stack (DESIGN.md, "Deadlock");
 * a handler on the thread's own stack is walked through to the code it
 * interrupted. */
#ifndef HI_INJECTOR_SAFEPOINT_H
#define HI_INJECTOR_SAFEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/libc.h"
#include "injector/maps.h"

#define INJ_SAFEPOINT_MAX_RANGES 16

struct inj_range {
    uint64_t lo, hi;
};

struct inj_safepoint {
    void *as;                 /* unw_addr_space_t for ptrace unwinding */
    struct inj_range ldso[INJ_SAFEPOINT_MAX_RANGES]; /* mappings of the dynamic linker */
    int nldso;
    struct inj_range alloc;   /* glibc's allocator code (inj_libc.alloc_lo/hi) */
    const struct inj_maps *maps; /* the target's mappings; outlives sp */
    pid_t tid;                /* the thread being unwound, during a check */
    struct inj_uwc *uwc;      /* cached memory, unwind tables, names (unwind_cache.h) */
};

/* Prepares the checks for a target. Returns 0 or -errno. */
int inj_safepoint_init(struct inj_safepoint *sp, const struct inj_maps *maps,
                       const struct inj_libc *libc);
void inj_safepoint_fini(struct inj_safepoint *sp);

/* Unwinds the ptrace-stopped thread tid. Returns 1 when no frame is in an
 * unsafe place, 0 when one is (why says which frame and why), or -errno. */
int inj_safepoint_check(struct inj_safepoint *sp, pid_t tid, char *why, size_t whylen);

/* Whether a function name marks a frame that must not be under a dlopen
 * call: allocator entry points and internals (glibc, jemalloc, tcmalloc,
 * mimalloc), the dynamic linker's API, fork and exit processing. */
bool inj_safepoint_unsafe_name(const char *name);

/* The lists behind inj_safepoint_unsafe_name (NULL-terminated): exact
 * names, prefixes, substrings. The gdb method checks frames with them. */
extern const char *const inj_safepoint_unsafe_exact[];
extern const char *const inj_safepoint_unsafe_prefix[];
extern const char *const inj_safepoint_unsafe_substr[];

#endif /* HI_INJECTOR_SAFEPOINT_H */
