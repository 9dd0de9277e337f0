/* got.c - mprotect-bracketed GOT slot stores. */
#include "payload/got.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/procmaps.h"

int pl_got_write(uintptr_t addr, uintptr_t value, int *prot_lost)
{
    *prot_lost = 0;
    if (addr & (sizeof(uintptr_t) - 1))
        return -EINVAL;
    long pgsz = sysconf(_SC_PAGESIZE);
    if (pgsz <= 0)
        return -EINVAL;
    void *page = (void *)(addr & ~((uintptr_t)pgsz - 1));
    int prot;
    int err = pl_maps_prot(addr, &prot);
    if (err)
        return err;
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
