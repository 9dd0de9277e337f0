/* procmaps.h - the current protection of an address, and whether it is
 * anonymous memory, from the calling thread's /proc maps; opening the
 * process's own /proc files.
 * open/read into a stack buffer: no stdio, no heap. */
#ifndef HI_PAYLOAD_PROCMAPS_H
#define HI_PAYLOAD_PROCMAPS_H

#include <stdint.h>

/* Opens /proc/thread-self/NAME (read-only, close-on-exec), else
 * /proc/self/NAME (Linux < 3.17). The calling thread's own view: once the
 * main thread has exited (pthread_exit, a zombie thread-group leader),
 * /proc/self/maps reads empty and statm all zeros, while every live
 * thread's still shows the process. An fd, or -errno (EMFILE: the process
 * is out of descriptors). */
int pl_proc_open_self(const char *name);

/* PROT_* of the mapping containing addr into *prot. 0, -ENOENT (not
 * mapped) or -errno from open/read. */
int pl_maps_prot(uintptr_t addr, int *prot);

/* [*lo, *hi): the readable mapping containing addr. 0, -EACCES (not
 * readable), -ENOENT or -errno as pl_maps_prot. */
int pl_maps_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* True when addr lies in an anonymous mapping (no file: inode 0, no path
 * or an "[anon:...]" name). False when not mapped or unreadable. */
int pl_maps_anon(uintptr_t addr);

#endif /* HI_PAYLOAD_PROCMAPS_H */
