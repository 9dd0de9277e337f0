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
#include <sys/stat.h>
#include <unistd.h>

int hi_open_regular(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

    if (fd < 0)
        return -errno;
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
