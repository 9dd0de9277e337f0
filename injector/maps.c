/* maps.c - /proc/PID/maps of the target: mappings, modules, and their files. */
#include "injector/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/maps_line.h"
#include "common/open_regular.h"

static int read_file(const char *path, char **out)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap), *nbuf;
    int fd, err;
    ssize_t r;

    if (!buf)
        return -ENOMEM;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err = -errno;
        free(buf);
        return err;
    }
    for (;;) {
        if (len + 1 >= cap) {
            nbuf = realloc(buf, cap * 2);
            if (!nbuf) {
                err = -ENOMEM;
                goto fail;
            }
            buf = nbuf;
            cap *= 2;
        }
        r = read(fd, buf + len, cap - len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            err = -errno;
            goto fail;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    *out = buf;
    return 0;
fail:
    close(fd);
    free(buf);
    return err;
}

int inj_maps_parse(const char *text, struct inj_maps *out)
{
    size_t cap = 0;
    const char *line = text, *end = text + strlen(text);

    out->v = NULL;
    out->n = 0;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        struct hi_maps_line l;
        if (hi_maps_line_parse(line, le, &l)) {
            struct inj_map m = { l.start, l.end, l.offset, l.inode, { 0 }, l.deleted, NULL };
            memcpy(m.perms, l.perms, sizeof(m.perms));
            m.path = strndup(l.path ? l.path : "", l.pathlen); /* "" when anonymous */
            if (!m.path)
                goto nomem;
            if (out->n == cap) {
                cap = cap ? cap * 2 : 256;
                struct inj_map *nv = realloc(out->v, cap * sizeof(*nv));
                if (!nv) {
                    free(m.path);
                    goto nomem;
                }
                out->v = nv;
            }
            out->v[out->n++] = m;
        }
        line = nl ? nl + 1 : end;
    }
    return 0;
nomem:
    inj_maps_free(out);
    return -ENOMEM;
}

int inj_maps_read(pid_t pid, struct inj_maps *out)
{
    char path[64], *text = NULL;
    int err;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    err = read_file(path, &text);
    if (err)
        return err;
    err = inj_maps_parse(text, out);
    free(text);
    return err;
}

void inj_maps_free(struct inj_maps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

const struct inj_map *inj_maps_find_addr(const struct inj_maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (addr < m->v[mid].start)
            hi = mid;
        else if (addr >= m->v[mid].end)
            lo = mid + 1;
        else
            return &m->v[mid];
    }
    return NULL;
}

const struct inj_map *inj_maps_find_module(const struct inj_maps *m,
                                           bool (*match)(const char *path))
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].path[0] == '/' && match(m->v[i].path))
            return &m->v[i];
    return NULL;
}

const struct inj_map *inj_maps_module_head(const struct inj_maps *m, const char *path)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].offset == 0 && !strcmp(m->v[i].path, path))
            return &m->v[i];
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');

    return s ? s + 1 : path;
}

bool inj_maps_is_libc(const char *path)
{
    const char *b = base_name(path);

    /* libc.so.6 (glibc >= 2.34 and most distributions), libc-2.31.so (older
     * glibc installs the versioned file and libc.so.6 as a link to it). */
    if (!strncmp(b, "libc.so", 7))
        return true;
    return !strncmp(b, "libc-", 5) && strstr(b, ".so") != NULL;
}

bool inj_maps_is_ldso(const char *path)
{
    const char *b = base_name(path);

    return !strncmp(b, "ld-linux", 8) || (!strncmp(b, "ld-", 3) && strstr(b, ".so"));
}

int inj_maps_open_file(pid_t pid, const struct inj_map *map)
{
    char p[4200];
    int fd;

    snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
             map->start, map->end);
    /* A map_files entry is a magic link to the mapped file itself, not a
     * path the target's user can redirect: it is followed on purpose. */
    fd = hi_open_regular(p);
    if (fd >= 0)
        return fd;
    if (map->path[0] != '/')
        return -ENOENT;
    snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
    fd = hi_open_mapped(p, map->path);
    if (fd >= 0)
        return fd;
    /* Last resort: our own view of the path. Wrong only if the file was
     * replaced and map_files is not readable (no CAP_SYS_ADMIN). */
    return hi_open_mapped(NULL, map->path);
}
