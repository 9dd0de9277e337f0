/* census_kernel.c - the epoll registrations' data words, for the census
 * child (see census_kernel.h). */
#include "payload/census_kernel.h"

#include <dirent.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "payload/procmaps.h"

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
                for (int d; q < nl && (d = pl_proc_hexval(*q)) >= 0 && digits < 16; q++, digits++)
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

/* fd's /proc/self/fd link is an epoll instance. */
static int is_epoll(int dirfd, const char *name)
{
    char link[64];
    ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    return !strcmp(link, "anon_inode:[eventpoll]");
}

static void read_fdinfo(struct pl_kernel_words *k, const char *name)
{
    char path[32], buf[16384];
    size_t nl = strlen(name);
    if (nl > 20)
        return;
    memcpy(path, "fdinfo/", 7);
    memcpy(path + 7, name, nl + 1);
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
    memset(k, 0, sizeof(*k) - sizeof(k->w));
    int dir = pl_proc_open_self("fd");
    if (dir < 0)
        return;
    char buf[8192];
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] == '.' || !is_epoll(dir, d->d_name))
                continue;
            read_fdinfo(k, d->d_name);
        }
    }
    close(dir);
}
