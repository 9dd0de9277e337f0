/* procmaps.h - the current protection of an address, and whether it is
 * anonymous memory, from /proc/self/maps.
 * open/read into a stack buffer: no stdio, no heap. */
#ifndef HI_PAYLOAD_PROCMAPS_H
#define HI_PAYLOAD_PROCMAPS_H

#include <stdint.h>

/* PROT_* of the mapping containing addr into *prot. 0, -ENOENT (not
 * mapped) or -errno from open/read. */
int pl_maps_prot(uintptr_t addr, int *prot);

/* True when addr lies in an anonymous mapping (no file: inode 0, no path
 * or an "[anon:...]" name). False when not mapped or unreadable. */
int pl_maps_anon(uintptr_t addr);

#endif /* HI_PAYLOAD_PROCMAPS_H */
