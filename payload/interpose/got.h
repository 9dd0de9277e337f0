/* got.h - writing one GOT slot, whatever the page's protection.
 *
 * The protection is learned once, when a slot is first patched: from the
 * calling thread's /proc maps (RELRO pages are read-only after relocation,
 * others are writable; assuming either has crashed people), else from the
 * module's program headers (PT_GNU_RELRO: read-only; otherwise the PT_LOAD
 * segment's flags) when no /proc file can be opened (the process is out of
 * descriptors). The caller keeps it and passes it to every later write, so
 * undoing a patch never depends on /proc: /proc/self/maps reads empty once
 * the main thread has exited, and cannot be opened at EMFILE. A write makes
 * the page writable with mprotect on the real page size, stores the slot
 * atomically (threads calling through it see the old or the new value) and
 * puts the protection back. Every result is checked.
 */
#ifndef HI_PAYLOAD_GOT_H
#define HI_PAYLOAD_GOT_H

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/syscall.h>

/* The PROT_* of the page holding addr, a slot of the module info
 * describes: /proc maps first, program headers otherwise. 0 or -errno
 * (-ENOENT: addr is in no segment of the module). */
int pl_got_prot(const struct dl_phdr_info *info, uintptr_t addr, int *prot);

/* Stores value at the 8-byte slot addr, whose page has protection prot
 * (from pl_got_prot). 0, or -errno (nothing written when the page could
 * not be made writable). If only restoring the protection fails, the slot
 * is written, the page stays writable, -errno is returned and *prot_lost
 * is set. */
int pl_got_write(uintptr_t addr, uintptr_t value, int prot, int *prot_lost);

/* The slot's current value (the module must be loaded). */
static inline uintptr_t pl_got_read(uintptr_t addr)
{
    return __atomic_load_n((const uintptr_t *)addr, __ATOMIC_ACQUIRE);
}

#endif /* HI_PAYLOAD_GOT_H */
