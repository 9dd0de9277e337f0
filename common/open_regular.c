/* open_regular.c - open a file whose name came from the target.
 *
 * Paths in /proc/PID/maps, and the files behind /proc/PID/root, belong to
 * the target's user: a library can be deleted after it is mapped and a
 * FIFO made in its place, and open(O_RDONLY) of a FIFO waits for a writer.
 * O_NONBLOCK makes that open return at once; the type is checked on the
 * descriptor itself (no race with a rename), and the flag is cleared for
 * the readers (libelf, libdw) that follow. */
#include "common/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* fd opened with OPEN_FLAGS: kept only if a regular file, made blocking. */
static int keep_regular(int fd)
{
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) < 0)
        err = errno;
    else if (!S_ISREG(st.st_mode))
        err = EINVAL;
    else if (fcntl(fd, F_SETFL, 0) < 0)
        err = errno;
    if (err) {
        close(fd);
        return -err;
    }
    return fd;
}

int hi_open_regular(const char *path)
{
    int fd = open(path, OPEN_FLAGS);
    return fd < 0 ? -errno : keep_regular(fd);
}

int hi_open_mapped(const char *root, const char *path)
{
    int dirfd = AT_FDCWD;
    if (root && (dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -errno;
    struct open_how how = {
        .flags = OPEN_FLAGS,
        /* IN_ROOT: "/usr/lib/x" is looked up under root, and ".." cannot
         * leave it; the root itself (a /proc magic link) is the kernel's. */
        .resolve = RESOLVE_NO_SYMLINKS | (root ? RESOLVE_IN_ROOT : 0),
    };
    int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd < 0 && errno == ENOSYS) {
        /* No openat2: the last component at least (the common swap). */
        if (root)
            while (*path == '/')
                path++;
        fd = openat(dirfd, path, OPEN_FLAGS | O_NOFOLLOW);
    }
    int err = errno;
    if (dirfd != AT_FDCWD)
        close(dirfd);
    return fd < 0 ? -err : keep_regular(fd);
}
