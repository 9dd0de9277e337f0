/* libc.h - the target's C library: where dlopen, dlsym and dlerror are, and
 * where its allocator's code lies, resolved from the file the target maps. */
#ifndef HI_INJECTOR_LIBC_H
#define HI_INJECTOR_LIBC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/maps.h"

/* glibc's private flag that makes __libc_dlopen_mode behave like dlopen
 * (include/dlfcn.h: __RTLD_DLOPEN). */
#define INJ_RTLD_DLOPEN 0x80000000u

struct inj_libc {
    char path[PATH_MAX];     /* libc as the target's maps name it */
    uint64_t bias;           /* load bias of libc in the target */
    uint64_t dlopen;         /* absolute addresses in the target */
    uint64_t dlsym;
    uint64_t dlerror;        /* 0 when only the glibc-internal entry points exist */
    uint64_t mmap, munmap;   /* for the gdb method's string buffer */
    uint64_t sigaction;      /* glibc's sigreturn trampoline follows it (0: unknown) */
    unsigned dlopen_flags;   /* or'ed into the mode: INJ_RTLD_DLOPEN or 0 */
    char dlopen_name[32];    /* "dlopen" or "__libc_dlopen_mode", for messages */
    uint64_t alloc_lo, alloc_hi; /* [lo, hi): the allocator's code (malloc.o) */
};

/* Resolves everything above for pid. Returns INJ_OK or an enum inj_error
 * (INJ_ESTATIC when no libc is mapped, INJ_EINTERNAL otherwise) with err. */
int inj_libc_resolve(pid_t pid, const struct inj_maps *maps, struct inj_libc *out, char *err,
                     size_t errlen);

/* Whether name is one of the malloc-family entry points of glibc. */
int inj_libc_is_alloc_name(const char *name);

#endif /* HI_INJECTOR_LIBC_H */
