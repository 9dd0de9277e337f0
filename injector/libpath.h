/* libpath.h - the path under which the target can open the library. */
#ifndef HI_INJECTOR_LIBPATH_H
#define HI_INJECTOR_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Checks that library exists and is a readable regular file (before the
 * target is touched), then gives the path to pass to the target's dlopen:
 * its realpath when the target shares our mount namespace and its user
 * can read that path (checked with its credentials: a build in a 0700 home
 * cannot be read by postgres or www-data); otherwise a copy placed into
 * the target's own view, /tmp/.heapinject-UID/BASENAME (or
 * /dev/shm, /var/tmp) written through /proc/PID/root, UID being the
 * target's. An existing copy is replaced by rename, never rewritten in
 * place: the target may have the old one mapped. Returns INJ_OK or
 * INJ_ELIB / INJ_EPERM / INJ_EINTERNAL with err. */
int inj_libpath_prepare(pid_t pid, const char *library, char *out, size_t outlen,
                        bool verbose, char *err, size_t errlen);

/* After the injection, loaded or not: removes the copy that
 * inj_libpath_prepare made in the target's mount namespace (target_path
 * differs from library's real path), so that no file of ours stays in the
 * target's /tmp. A loaded copy lives on as its mapping, and a later dlopen
 * of the same path finds it by name (glibc matches l_name before opening
 * anything), so a second session needs no file either. */
void inj_libpath_cleanup(pid_t pid, const char *library, const char *target_path, bool verbose);

#endif /* HI_INJECTOR_LIBPATH_H */
