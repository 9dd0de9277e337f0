/* sock.c - safe creation and removal of the control socket. */
#include "payload/serve/sock.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/config.h"

static int listen_in(const char *dir, const char *path, size_t len, struct pl_sock_id *id);

/* The directory must be ours alone: the socket's permission check relies
 * on it (connect() needs search permission on every directory). */
static int check_dir(const char *dir, int *made)
{
    struct stat st;
    *made = mkdir(dir, 0700) == 0;
    if (!*made && errno != EEXIST)
        return -errno;
    if (lstat(dir, &st) != 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR; /* also a symlink: lstat does not follow it */
    if (st.st_uid != geteuid())
        return -EPERM;
    if (st.st_mode & 077)
        return -EACCES;
    return 0;
}

int pl_sock_listen(const char *path, struct pl_sock_id *id)
{
    struct sockaddr_un sa;
    size_t len = strlen(path);
    if (path[0] != '/' || len >= sizeof(sa.sun_path) || len > HI_SOCK_PATH_MAX)
        return -ENAMETOOLONG;

    char dir[sizeof(sa.sun_path)];
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        return -EACCES; /* "/" itself is not a private directory */
    *slash = '\0';
    if (!slash[1])
        return -EINVAL; /* no file name */
    /* Another session's detach may remove the directory, empty, between
     * our check and our bind (ENOENT): make it again. */
    for (int tries = 0;; tries++) {
        int fd = listen_in(dir, path, len, id);
        if (fd != -ENOENT || tries == 3)
            return fd;
    }
}

/* One try of pl_sock_listen. */
static int listen_in(const char *dir, const char *path, size_t len, struct pl_sock_id *id)
{
    struct sockaddr_un sa;
    int err = check_dir(dir, &id->made_dir);
    if (err)
        return err;

    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
            return -EEXIST;
        if (unlink(path) != 0)
            return -errno;
    } else if (errno != ENOENT) {
        return -errno;
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, len + 1);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        goto fail;
    /* The directory already keeps others out; 0600 says so again. */
    if (chmod(path, 0600) != 0 || lstat(path, &st) != 0)
        goto fail_unlink;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    if (listen(fd, 8) != 0)
        goto fail_unlink;
    return fd;

fail_unlink:
    err = -errno;
    unlink(path);
    close(fd);
    return err;
fail:
    err = -errno;
    close(fd);
    return err;
}

void pl_sock_unlink(const char *path, struct pl_sock_id *id)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == id->dev && st.st_ino == id->ino)
        unlink(path);
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    size_t len = strlen(path);
    char *slash;
    if (!id->made_dir || len >= sizeof(dir))
        return;
    memcpy(dir, path, len + 1);
    if ((slash = strrchr(dir, '/')) && slash != dir) {
        *slash = '\0';
        rmdir(dir); /* ENOTEMPTY: another session's socket, left be */
    }
    id->made_dir = 0;
}
