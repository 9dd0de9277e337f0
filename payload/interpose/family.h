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
    /* Direct mappings (issue 14): a family of their own in the reports
     * (HI_KIND_MMAP), hooked through the same slots, families and restore.
     * Never patched in a module that defines malloc itself: those calls
     * are that allocator's own (modules.c). */
    PL_F_MMAP,
    PL_F_MMAP64,
    PL_F_MUNMAP,
    PL_F_MREMAP,
    /* The dynamic lookups, so that a malloc found with dlsym after attach
     * (ctypes, libffi, plugins) is the hook (hooks_dlsym.c). */
    PL_F_DLSYM,
    PL_F_DLVSYM,
    /* The ways a program installs a seccomp filter, so that the hooks are
     * off before it takes effect (hooks_sandbox.c, issue 25). */
    PL_F_PRCTL,
    PL_F_SECCOMP,
    PL_F_SYSCALL,
    PL_F_COUNT
};

#define PL_F_MALLOC_COUNT PL_F_MMAP /* functions of the malloc family */

/* func is one of mmap, mmap64, munmap, mremap. */
static inline int pl_func_is_map(unsigned func)
{
    return func >= PL_F_MMAP && func <= PL_F_MREMAP;
}

struct pl_family {
    uintptr_t module_base;          /* dli_fbase of the defining module */
    void *orig[PL_F_COUNT];         /* forward targets; 0 until a slot needs it */
    size_t (*usable)(void *);       /* that module's malloc_usable_size, or NULL */
    int glibc;                      /* the module is glibc's libc: pl_glibc_usable */
};

/* Hidden: a hook reaches its original with one `call *pl_families+off(%rip)`. */
extern struct pl_family pl_families[PL_MAX_FAMILIES] __attribute__((visibility("hidden")));

/* Copies of orig[PL_F_DLSYM] and orig[PL_F_DLVSYM] where the dlsym stubs'
 * assembly finds them (hooks_dlsym.c). */
extern void *pl_dlsym_fwd[PL_MAX_FAMILIES][2];

/* Likewise orig[PL_F_PRCTL], [PL_F_SECCOMP], [PL_F_SYSCALL] for the
 * sandbox stubs (hooks_sandbox.c). */
extern void *pl_sandbox_fwd[PL_MAX_FAMILIES][3];

/* func is prctl, seccomp or syscall. */
static inline int pl_func_is_sandbox(unsigned func)
{
    return func >= PL_F_PRCTL && func <= PL_F_SYSCALL;
}

/* glibc's malloc_usable_size of a block, inline.
 * Issue 3 counts a free's exact usable bytes, and the call was a quarter
 * of the unsampled hooks' instructions and most of their time (perf: it
 * checks the in-use bit in the NEXT chunk's header, a cache line free()
 * itself often does not touch). glibc's chunk layout on x86-64 (malloc.c,
 * unchanged since 2.0): the size field is the word before the block, its
 * low 3 bits are flags, IS_MMAPPED = 2; musable() returns chunksize - 16
 * for an mmapped chunk and chunksize - 8 otherwise, or 0 for a chunk that
 * is not in use, which a block being freed or just allocated is not (a
 * double free aside, where glibc's own free aborts or corrupts anyway).
 * Only for families whose malloc is glibc's own (pl_family.glibc) and only
 * on x86-64 (aarch64's memory tagging changes memsize());
 * tests/unit/payload_family.c checks it against malloc_usable_size for
 * sizes up to mmapped blocks. The hooks keep the header word (one load)
 * and leave the arithmetic to the reader of the counters (thread.h). */
static inline uint64_t pl_glibc_header(const void *p)
{
    return ((const uint64_t *)p)[-1];
}

static inline uint64_t pl_glibc_usable_of(uint64_t hdr)
{
    return (hdr & ~(uint64_t)7) - 8 - ((hdr & 2) << 2);
}

static inline uint64_t pl_glibc_usable(const void *p)
{
    return pl_glibc_usable_of(pl_glibc_header(p));
}

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

/* The hook for (family, func) (hooks.c; hooks_mmap.c and hooks_dlsym.c
 * for their functions). */
uintptr_t pl_hook_addr(int family, unsigned func);
uintptr_t pl_hook_map_addr(int family, unsigned func);
uintptr_t pl_hook_dlsym_addr(int family, unsigned func);
uintptr_t pl_hook_sandbox_addr(int family, unsigned func);

/* The hook that stands for `fn` when fn is the original of a patched
 * function of some family (hooks.c use it for dlsym results), else 0. */
uintptr_t pl_hook_for_orig(uintptr_t fn);

#endif /* HI_PAYLOAD_FAMILY_H */
