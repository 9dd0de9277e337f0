/* libpath.h - the path under which the target can open the library. */
#ifndef HI_INJECTOR_LIBPATH_H
#define HI_INJECTOR_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Checks that library exists and is a readable regular file (before the
 * target is touched), then gives the path to pass to the target's dlopen:
 * its realpath when the target shares our mount namespace; otherwise a copy
 * placed into the target's own view, /tmp/.heapinject-UID/BASENAME (or
 * /dev/shm, /var/tmp) written through /proc/PID/root, UID being the
 * target's. An existing copy is replaced by rename, never rewritten in
 * place: the target may have the old one mapped. Returns INJ_OK or
 * INJ_ELIB / INJ_EPERM / INJ_EINTERNAL with err. */
int inj_libpath_prepare(pid_t pid, const char *library, char *out, size_t outlen,
                        bool verbose, char *err, size_t errlen);

#endif /* HI_INJECTOR_LIBPATH_H */
