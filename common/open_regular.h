/* open_regular.h - open a file whose name came from the target. */
#ifndef HI_COMMON_OPEN_REGULAR_H
#define HI_COMMON_OPEN_REGULAR_H

/* Opens path read-only only if it is a regular file: never blocks in open()
 * (a FIFO or a device put where a mapped library was would hang the cli or
 * the injector, running as root, for ever) and never reads a non-file.
 * A descriptor (blocking, close-on-exec), or -errno (-EINVAL: not a
 * regular file). */
int hi_open_regular(const char *path);

#endif /* HI_COMMON_OPEN_REGULAR_H */
