/* got.c - mprotect-bracketed GOT slot stores. */
#include "payload/interpose/got.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/sys/sys.h"

/* The protection the loader leaves on addr, from the module's program
 * headers: glibc mprotects PT_GNU_RELRO to PROT_READ once relocated (with
 * -z now that covers the whole GOT); anything else keeps its PT_LOAD's
 * flags. */
static int prot_from_phdrs(const struct dl_phdr_info *info, uintptr_t addr, int *prot)
{
    int found = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (addr < lo || addr >= hi)
            continue;
        if (ph->p_type == PT_GNU_RELRO) {
            *prot = PROT_READ;
            return 0;
        }
        if (ph->p_type == PT_LOAD) {
            *prot = ((ph->p_flags & PF_R) ? PROT_READ : 0) | ((ph->p_flags & PF_W) ? PROT_WRITE : 0) |
                    ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
            found = 1;
        }
    }
    return found ? 0 : -ENOENT;
}

int pl_got_prot(const struct dl_phdr_info *info, uintptr_t addr, int *prot)
{
    int err = pl_maps_prot(addr, prot);
    if (err == 0 || err == -ENOENT)
        return err;
    return prot_from_phdrs(info, addr, prot);
}

int pl_got_write(uintptr_t addr, uintptr_t value, int prot, int *prot_lost)
{
    *prot_lost = 0;
    if (addr & (sizeof(uintptr_t) - 1))
        return -EINVAL;
    long pgsz = sysconf(_SC_PAGESIZE);
    if (pgsz <= 0)
        return -EINVAL;
    void *page = (void *)(addr & ~((uintptr_t)pgsz - 1));
    if (!(prot & PROT_READ))
        return -EFAULT;
    if (!(prot & PROT_WRITE) && mprotect(page, (size_t)pgsz, prot | PROT_WRITE) != 0)
        return -errno;
    __atomic_store_n((uintptr_t *)addr, value, __ATOMIC_RELEASE);
    if (!(prot & PROT_WRITE) && mprotect(page, (size_t)pgsz, prot) != 0) {
        *prot_lost = 1;
        return -errno;
    }
    return 0;
}
