/* uffd_fdinfo.h - the features of a userfaultfd, from the text of its
 * /proc/PID/fdinfo file (fs/userfaultfd.c writes "API:\t<api>:<features>:
 * <ioctls>" in hex; features 0x80000002 is UFFD_FEATURE_EVENT_FORK with
 * the kernel's own "initialized" bit). A userfaultfd with
 * UFFD_FEATURE_EVENT_FORK gets an event, with a new descriptor, for every
 * fork of the process, and the fork waits until the monitor reads it: a
 * census (a fork) is refused then. Used by the cli before it attaches
 * and by the payload (no allocation). */
#ifndef HI_COMMON_UFFD_FDINFO_H
#define HI_COMMON_UFFD_FDINFO_H

#include <stdint.h>

/* The features word of the "API:" line of text, or -1 when there is none. */
int64_t hi_uffd_features(const char *text);

/* Whether a link target of /proc/PID/fd/N names a userfaultfd. */
int hi_uffd_is_link(const char *link);

#endif /* HI_COMMON_UFFD_FDINFO_H */
