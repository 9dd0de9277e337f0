/* procmaps.c - protection lookup in /proc/self/maps. */
#include "payload/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Parses "lo-hi perms" at the start of line; 0 or -1. */
static int parse_line(const char *line, size_t len, uintptr_t *lo, uintptr_t *hi, int *prot)
{
    size_t i = 0;
    uintptr_t v = 0;
    int h;
    for (; i < len && (h = hexval(line[i])) >= 0; i++)
        v = v << 4 | (uintptr_t)h;
    if (i >= len || line[i] != '-')
        return -1;
    *lo = v;
    v = 0;
    for (i++; i < len && (h = hexval(line[i])) >= 0; i++)
        v = v << 4 | (uintptr_t)h;
    if (i + 4 >= len || line[i] != ' ')
        return -1;
    *hi = v;
    const char *p = line + i + 1;
    *prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
    return 0;
}

int pl_maps_prot(uintptr_t addr, int *prot)
{
    char buf[4096];
    size_t have = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int ret = -ENOENT;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof(buf) - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ret = -errno;
            break;
        }
        have += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] != '\n')
                continue;
            uintptr_t lo, hi;
            int pr;
            if (parse_line(buf + start, i - start, &lo, &hi, &pr) == 0 && addr >= lo && addr < hi) {
                *prot = pr;
                ret = 0;
                goto out;
            }
            start = i + 1;
        }
        if (r == 0)
            break;
        /* keep the partial last line; a line longer than the buffer (a
         * huge path) is cut, its first bytes still parse */
        if (start == 0 && have == sizeof(buf))
            start = have;
        memmove(buf, buf + start, have - start);
        have -= start;
    }
out:
    close(fd);
    return ret;
}
