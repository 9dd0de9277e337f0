/* sock.h - the control socket's file: a private directory, a unix socket.
 *
 * Only root or the target's own user may talk to the agent. The directory
 * is created mode 0700 if missing and refused if it is a symlink, is owned
 * by someone else, or is accessible to group or others. A file already at
 * the socket path is removed only when it is a socket we own (a stale one
 * from a killed session); lstat everywhere, never following a symlink.
 */
#ifndef HI_PAYLOAD_SOCK_H
#define HI_PAYLOAD_SOCK_H

#include <sys/types.h>

struct pl_sock_id {
    dev_t dev;
    ino_t ino;
    int made_dir; /* the directory was created by this session: removed with the socket if empty */
};

/* Creates, binds and listens on path (non-blocking, close-on-exec).
 * Returns the fd, or -errno. *id identifies the socket file we made. */
int pl_sock_listen(const char *path, struct pl_sock_id *id);

/* Unlinks path if it is still the socket file identified by id, and its
 * directory if we made it and it is now empty (rmdir: another session's
 * socket inside keeps it; that session's listen retries should we remove
 * it between its mkdir and its bind). */
void pl_sock_unlink(const char *path, struct pl_sock_id *id);

#endif /* HI_PAYLOAD_SOCK_H */
