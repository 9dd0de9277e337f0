/* got.h - writing one GOT slot, whatever the page's protection.
 *
 * The protection is read from /proc/self/maps (RELRO pages are read-only
 * after relocation, others are writable; assuming either has crashed
 * people), made writable with mprotect on the real page size, the slot is
 * stored atomically (threads calling through it see the old or the new
 * value), and the protection is put back. Every result is checked.
 */
#ifndef HI_PAYLOAD_GOT_H
#define HI_PAYLOAD_GOT_H

#include <stdint.h>

/* Stores value at the 8-byte slot addr. 0, or -errno (nothing written when
 * the page could not be made writable). If only restoring the protection
 * fails, the slot is written, the page stays writable, -errno is returned
 * and *prot_lost is set. */
int pl_got_write(uintptr_t addr, uintptr_t value, int *prot_lost);

/* The slot's current value (the module must be loaded). */
static inline uintptr_t pl_got_read(uintptr_t addr)
{
    return __atomic_load_n((const uintptr_t *)addr, __ATOMIC_ACQUIRE);
}

#endif /* HI_PAYLOAD_GOT_H */
