/* mem.h - reading and writing the target's memory. */
#ifndef HI_INJECTOR_MEM_H
#define HI_INJECTOR_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies len bytes to/from addr in pid with process_vm_writev/readv, falling
 * back to /proc/PID/mem (which also works where process_vm_* is filtered).
 * Both need ptrace access to pid. Return 0 or -errno (-EFAULT: unmapped). */
int inj_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
int inj_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Reads a NUL-terminated string of at most size-1 bytes; always terminates
 * buf. Reads page by page so a string near the end of a mapping works.
 * Returns its length or -errno. */
int inj_mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size);

#endif /* HI_INJECTOR_MEM_H */
