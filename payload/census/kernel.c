/* census_kernel.c - the epoll registrations' data words, for the census
 * child (see census_kernel.h). */
#include "payload/census/kernel.h"

#include <dirent.h>
#include <errno.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/uffd_fdinfo.h"
#include "payload/sys/sys.h"
#include "common/hexdigit.h"

void pl_kernel_words_parse(struct pl_kernel_words *k, const char *text, uint64_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        if (nl - p > 4 && !memcmp(p, "tfd:", 4)) {
            for (const char *q = p; q + 5 <= nl; q++) {
                if (memcmp(q, "data:", 5))
                    continue;
                q += 5;
                while (q < nl && *q == ' ')
                    q++;
                uintptr_t v = 0;
                int digits = 0;
                for (int d; q < nl && (d = hi_hexval(*q)) >= 0 && digits < 16; q++, digits++)
                    v = v << 4 | (uintptr_t)d;
                if (digits) {
                    if (k->n < PL_KERNEL_MAX_WORDS)
                        k->w[k->n++] = v;
                    else
                        k->dropped++;
                }
                break;
            }
        }
        p = nl + 1;
    }
}

/* What fd's /proc/self/fd link names: an epoll instance, a userfaultfd,
 * something else. */
enum fd_kind { FD_OTHER, FD_EPOLL, FD_USERFAULTFD };

static enum fd_kind fd_kind(int dirfd, const char *name)
{
    char link[64];
    ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);
    if (n <= 0)
        return FD_OTHER;
    link[n] = '\0';
    if (!strcmp(link, "anon_inode:[eventpoll]"))
        return FD_EPOLL;
    return hi_uffd_is_link(link) ? FD_USERFAULTFD : FD_OTHER;
}

/* The features of a userfaultfd from its fdinfo, or -1 when they cannot
 * be read. */
static int64_t uffd_features(int uffd)
{
    char path[32], buf[512];
    snprintf(path, sizeof(path), "fdinfo/%d", uffd);
    int fd = pl_proc_open_self(path);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    return hi_uffd_features(buf);
}

int pl_kernel_fds_scan(struct pl_kernel_words *k, char *why, size_t len)
{
    memset(k, 0, offsetof(struct pl_kernel_words, w));
    int dir = pl_proc_open_self("fd");
    if (dir < 0)
        return 0;
    char buf[8192];
    int rc = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (long off = 0; off < n && rc == 0;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] == '.')
                continue;
            enum fd_kind kind = fd_kind(dir, d->d_name);
            int fd = (int)strtol(d->d_name, NULL, 10);
            if (kind == FD_EPOLL && k->n_epoll_fds < PL_KERNEL_MAX_EPOLLS)
                k->epoll_fd[k->n_epoll_fds++] = fd;
            if (kind != FD_USERFAULTFD)
                continue;
            int64_t f = uffd_features(fd);
            if (f < 0 || (f & UFFD_FEATURE_EVENT_FORK)) {
                snprintf(why, len,
                         "the process has a userfaultfd (descriptor %d) %s: the census's fork would send "
                         "its monitor a fork event and hold the program until it is read; no census was taken",
                         fd, f < 0 ? "whose features cannot be read" : "with UFFD_FEATURE_EVENT_FORK");
                rc = -EPERM;
            }
        }
        if (rc)
            break;
    }
    close(dir);
    return rc;
}

static void read_fdinfo(struct pl_kernel_words *k, int epoll_fd)
{
    char path[32], buf[16384];
    snprintf(path, sizeof(path), "fdinfo/%d", epoll_fd);
    int fd = pl_proc_open_self(path);
    if (fd < 0)
        return;
    /* A registration line is under 200 bytes: keep the tail of a window
     * that ends mid-line for the next read. */
    uint64_t have = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof(buf) - have);
        if (r <= 0) {
            pl_kernel_words_parse(k, buf, have);
            break;
        }
        have += (uint64_t)r;
        const char *last = memrchr(buf, '\n', have);
        if (!last) {
            have = 0; /* no line fits: drop it */
            continue;
        }
        uint64_t whole = (uint64_t)(last - buf) + 1;
        pl_kernel_words_parse(k, buf, whole);
        memmove(buf, buf + whole, have - whole);
        have -= whole;
    }
    close(fd);
    k->epolls++;
}

void pl_kernel_words_read(struct pl_kernel_words *k)
{
    k->n = k->epolls = 0;
    k->dropped = 0;
    for (uint32_t i = 0; i < k->n_epoll_fds; i++)
        read_fdinfo(k, k->epoll_fd[i]);
}
