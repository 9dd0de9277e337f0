/* open_regular.h - open a file whose name came from the target. */
#ifndef HI_COMMON_OPEN_REGULAR_H
#define HI_COMMON_OPEN_REGULAR_H

/* Opens path read-only only if it is a regular file: never blocks in open()
 * (a FIFO or a device put where a mapped library was would hang the cli or
 * the injector, running as root, for ever) and never reads a non-file.
 * A descriptor (blocking, close-on-exec), or -errno (-EINVAL: not a
 * regular file). */
int hi_open_regular(const char *path);

/* The same for a path the target's maps named, inside the directory root
 * (a /proc/PID/root, or NULL for our own view): no component may be a
 * symbolic link. The kernel prints maps paths fully resolved, so a link
 * there was put in after the mapping, by the target's user, to make a root
 * cli read a file of its choosing. openat2(RESOLVE_NO_SYMLINKS), and on a
 * kernel without it (before 5.6) O_NOFOLLOW on the last component.
 * A descriptor, or -errno (-ELOOP: a link on the way). */
int hi_open_mapped(const char *root, const char *path);

#endif /* HI_COMMON_OPEN_REGULAR_H */
