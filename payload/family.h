/* family.h - allocator families: which allocator a patched slot was bound to.
 *
 * Slots of different modules can bind to different definitions of malloc
 * (a preloaded allocator, DEEPBIND, -Bsymbolic, dlmopen). Each hook must
 * forward to the allocator its slot was bound to, so the hooks exist once
 * per family (hooks.c, macro-generated) and each family keeps its own
 * originals, keyed by the module that defines them (dladdr's dli_fbase).
 *
 * Families are permanent: created under the patch lock, never reset, so a
 * hook still running from an earlier session always forwards correctly.
 * orig[] entries are set once and never change.
 */
#ifndef HI_PAYLOAD_FAMILY_H
#define HI_PAYLOAD_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#define PL_MAX_FAMILIES 4

enum pl_func {
    PL_F_MALLOC,
    PL_F_FREE,
    PL_F_CALLOC,
    PL_F_REALLOC,
    PL_F_REALLOCARRAY,
    PL_F_POSIX_MEMALIGN,
    PL_F_ALIGNED_ALLOC,
    PL_F_MEMALIGN,
    PL_F_VALLOC,
    PL_F_PVALLOC,
    PL_F_COUNT
};

struct pl_family {
    uintptr_t module_base;          /* dli_fbase of the defining module */
    void *orig[PL_F_COUNT];         /* forward targets; 0 until a slot needs it */
    size_t (*usable)(void *);       /* that module's malloc_usable_size, or NULL */
};

extern struct pl_family pl_families[PL_MAX_FAMILIES];

/* Name of a function ("malloc"...). */
const char *pl_func_name(unsigned func);

/* enum pl_func for a symbol name, or -1. */
int pl_func_by_name(const char *name);

/* Family for allocator functions defined in the module at fbase, created
 * if new. -1 when all PL_MAX_FAMILIES are taken. Patch lock held; calls
 * dl_iterate_phdr, so never from inside a dl_iterate_phdr callback. */
int pl_family_get(uintptr_t fbase);

/* Sets family f's forward target for func, or checks it: 0, or -EEXIST if
 * the family already forwards func elsewhere. Patch lock held. */
int pl_family_bind(int f, unsigned func, void *target);

/* The hook for (family, func) (hooks.c). */
uintptr_t pl_hook_addr(int family, unsigned func);

#endif /* HI_PAYLOAD_FAMILY_H */
