/* leave.c - what the payload's own libraries leave in the target after detach. */
#include "payload/serve/leave.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PL_LEAVE_MAX_MODULES 16

/* Load addresses of libheapinject.so and of the modules that came with
 * it; written once under the start lock (pl_leave_init). */
static uintptr_t pl_leave_bases[PL_LEAVE_MAX_MODULES];
static unsigned pl_leave_nbases;

static int contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= s && addr < s + ph->p_memsz)
            return 1;
    }
    return 0;
}

struct init_arg {
    int after_us;
};

static int remember(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct init_arg *a = data;
    if (!a->after_us) {
        if (contains(info, (uintptr_t)&pl_leave_init)) {
            a->after_us = 1;
            pl_leave_bases[pl_leave_nbases++] = info->dlpi_addr;
        }
        return 0;
    }
    if (pl_leave_nbases < PL_LEAVE_MAX_MODULES && info->dlpi_name && info->dlpi_name[0])
        pl_leave_bases[pl_leave_nbases++] = info->dlpi_addr;
    return 0;
}

int pl_leave_init(void)
{
    if (pl_leave_nbases)
        return 0;
    struct init_arg a = { 0 };
    dl_iterate_phdr(remember, &a);
    return (int)pl_leave_nbases;
}

/* Whether the module's dynamic section asks for text relocations. */
static int has_textrel(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); dyn->d_tag != DT_NULL; dyn++)
            if (dyn->d_tag == DT_TEXTREL || (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL)))
                return 1;
    }
    return 0;
}

struct release_arg {
    uintptr_t page;
    unsigned long bytes;
};

static int release(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct release_arg *a = data;
    int ours = 0;
    for (unsigned i = 0; i < pl_leave_nbases; i++)
        ours |= pl_leave_bases[i] == info->dlpi_addr;
    if (!ours || has_textrel(info))
        return 0;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            relro_lo = (info->dlpi_addr + ph->p_vaddr) & ~(a->page - 1);
            relro_hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + a->page - 1) & ~(a->page - 1);
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue;
        /* Whole pages inside the segment's file image only (the rest of a
         * last page may be zero-filled memory of the next mapping). */
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr + a->page - 1) & ~(a->page - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_filesz) & ~(a->page - 1);
        if (hi <= lo || (lo < relro_hi && relro_lo < hi))
            continue;
        if (madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
            a->bytes += hi - lo;
    }
    return 0;
}

unsigned long pl_leave_release_text(void)
{
    long page = sysconf(_SC_PAGESIZE);
    struct release_arg a = { page > 0 ? (uintptr_t)page : 4096u, 0 };
    if (pl_leave_nbases)
        dl_iterate_phdr(release, &a);
    return a.bytes;
}
