/* last_keep.c - PID.last.tmp kept open from a root session's start (see
 * last_keep.h). */
#include "payload/serve/last_keep.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "payload/sys/sys.h"

/* Start lock writes; the agent (or the exiting thread) takes. */
static struct {
    int fd;     /* -1: none */
    pid_t pid;  /* the process that created it */
    dev_t dev;
    ino_t ino;
} kept = { -1, 0, 0, 0 };

/* The kept number still names the file we made (the program may have
 * closed it, and another of its files taken the number: never touched
 * then). */
static int same_file(void)
{
    struct stat st;
    return kept.fd >= 0 && fstat(kept.fd, &st) == 0 && st.st_dev == kept.dev && st.st_ino == kept.ino &&
           S_ISREG(st.st_mode);
}

/* ... and this process made it (not a parent, before a fork). */
static int still_ours(void)
{
    return kept.pid == pl_raw_getpid() && same_file();
}

void pl_last_keep_open(const char *tmp_path)
{
    if (kept.fd >= 0) {
        if (still_ours())
            unlink(tmp_path); /* our own earlier session's */
        if (same_file())
            close(kept.fd); /* ours, or the parent's inherited: its file stays */
        kept.fd = -1;
    }
    if (geteuid() != 0)
        return; /* a user other than root cannot become another one: the end's own open works */
    int fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        unlink(tmp_path); /* a file of an earlier process with our pid (root's directory: ours) */
        fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0) {
        close(fd);
        unlink(tmp_path);
        return;
    }
    kept.fd = fd;
    kept.pid = pl_raw_getpid();
    kept.dev = st.st_dev;
    kept.ino = st.st_ino;
}

PL_FORK_TEXT void pl_last_keep_atfork_child(void)
{
    if (kept.fd < 0)
        return; /* a load only: no root session, or none kept */
    if (same_file())
        close(kept.fd); /* the parent's file: not this child's to hold */
    kept.fd = -1;
}

int pl_last_keep_held(void)
{
    return kept.fd >= 0 && kept.pid == pl_raw_getpid();
}

int pl_last_keep_take(void)
{
    if (!still_ours())
        return -1;
    int fd = kept.fd;
    kept.fd = -1;
    return fd;
}

void pl_last_keep_drop(const char *tmp_path)
{
    if (!pl_last_keep_held())
        return;
    if (still_ours()) {
        unlink(tmp_path);
        close(kept.fd);
    }
    kept.fd = -1;
}
