/* family.c - the allocator family table and the function names. */
#include "payload/interpose/family.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#include "payload/sys/sys.h"

struct pl_family pl_families[PL_MAX_FAMILIES];
static int pl_nfamilies; /* patch lock */

static const char *const pl_func_names[PL_F_COUNT] = {
    [PL_F_MALLOC] = "malloc",
    [PL_F_FREE] = "free",
    [PL_F_CALLOC] = "calloc",
    [PL_F_REALLOC] = "realloc",
    [PL_F_REALLOCARRAY] = "reallocarray",
    [PL_F_POSIX_MEMALIGN] = "posix_memalign",
    [PL_F_ALIGNED_ALLOC] = "aligned_alloc",
    [PL_F_MEMALIGN] = "memalign",
    [PL_F_VALLOC] = "valloc",
    [PL_F_PVALLOC] = "pvalloc",
    [PL_F_MMAP] = "mmap",
    [PL_F_MMAP64] = "mmap64",
    [PL_F_MUNMAP] = "munmap",
    [PL_F_MREMAP] = "mremap",
    [PL_F_DLSYM] = "dlsym",
    [PL_F_DLVSYM] = "dlvsym",
    [PL_F_PRCTL] = "prctl",
    [PL_F_SECCOMP] = "seccomp",
    [PL_F_SYSCALL] = "syscall",
};

const char *pl_func_name(unsigned func)
{
    return func < PL_F_COUNT ? pl_func_names[func] : "?";
}

int pl_func_by_name(const char *name)
{
    /* Cheap reject first: this runs for every JUMP_SLOT/GLOB_DAT symbol. */
    switch (name[0]) {
    case 'm': case 'f': case 'c': case 'r': case 'p': case 'a': case 'v': case 'd': case 's': break;
    default: return -1;
    }
    for (unsigned i = 0; i < PL_F_COUNT; i++)
        if (strcmp(name, pl_func_names[i]) == 0)
            return (int)i;
    return -1;
}

struct usable_arg {
    uintptr_t base;
    uintptr_t found;
    int glibc;
};

static int find_usable(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct usable_arg *a = data;
    struct pl_dyn d;
    /* dli_fbase is the ELF header's address: the load bias for a shared
     * object or PIE, the first segment for a fixed-address executable. */
    if (pl_dyn_parse(info, &d) != 0 || a->base < d.lo || a->base >= d.hi)
        return 0;
    a->found = pl_dyn_lookup(&d, "malloc_usable_size");
    /* glibc's libc.so.6 is the module that defines gnu_get_libc_version;
     * an interposed allocator (jemalloc, tcmalloc, libc_malloc_debug.so)
     * is a module of its own and keeps the call. */
#if defined(__x86_64__)
    a->glibc = a->found && pl_dyn_lookup(&d, "gnu_get_libc_version") != 0;
#endif
    return 1;
}

int pl_family_get(uintptr_t fbase)
{
    for (int i = 0; i < pl_nfamilies; i++)
        if (pl_families[i].module_base == fbase)
            return i;
    if (pl_nfamilies >= PL_MAX_FAMILIES)
        return -1;
    struct usable_arg a = { fbase, 0, 0 };
    dl_iterate_phdr(find_usable, &a);
    struct pl_family *f = &pl_families[pl_nfamilies];
    f->module_base = fbase;
    f->usable = (size_t(*)(void *))a.found;
    f->glibc = a.glibc;
    return pl_nfamilies++;
}

int pl_family_bind(int f, unsigned func, void *target)
{
    void *cur = __atomic_load_n(&pl_families[f].orig[func], __ATOMIC_ACQUIRE);
    if (!cur) {
        if (func == PL_F_DLSYM || func == PL_F_DLVSYM) /* the stubs' forward target */
            __atomic_store_n(&pl_dlsym_fwd[f][func - PL_F_DLSYM], target, __ATOMIC_RELEASE);
        if (pl_func_is_sandbox(func))
            __atomic_store_n(&pl_sandbox_fwd[f][func - PL_F_PRCTL], target, __ATOMIC_RELEASE);
        __atomic_store_n(&pl_families[f].orig[func], target, __ATOMIC_RELEASE);
        return 0;
    }
    return cur == target ? 0 : -EEXIST;
}

uintptr_t pl_hook_for_orig(uintptr_t fn)
{
    if (!fn)
        return 0;
    for (int f = 0; f < PL_MAX_FAMILIES; f++)
        for (unsigned func = 0; func < PL_F_COUNT; func++)
            if ((uintptr_t)__atomic_load_n(&pl_families[f].orig[func], __ATOMIC_ACQUIRE) == fn)
                return pl_hook_addr(f, func);
    return 0;
}
