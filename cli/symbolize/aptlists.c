/* aptlists.c - which package names apt's downloaded lists hold, read
 * from the lists themselves (aptlists.h). */
#include "cli/symbolize/aptlists.h"

#include <dirent.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK (64 * 1024)
#define OUT_CHUNK (256 * 1024)

/* A line scanner over a stream: each whole line "Package: NAME" is
 * compared with the names asked. A line split between two chunks is put
 * together in line[]; a longer one (a description, never a Package line)
 * is skipped to its end, so that its tail is never taken for a line. */
struct scan {
    const char *const *names;
    size_t n;
    bool *seen;
    char line[256];
    size_t ll;
    bool overlong;
};

static void scan_line(struct scan *s, const char *p, size_t len)
{
    if (len <= 9 || memcmp(p, "Package: ", 9) != 0)
        return;
    p += 9;
    len -= 9;
    for (size_t i = 0; i < s->n; i++)
        if (s->names[i] && strlen(s->names[i]) == len && !memcmp(s->names[i], p, len))
            s->seen[i] = true;
}

static void scan_feed(struct scan *s, const char *buf, size_t len)
{
    while (len) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (s->ll || s->overlong || !nl) {
            if (!s->overlong && s->ll + take < sizeof(s->line)) {
                memcpy(s->line + s->ll, buf, take);
                s->ll += take;
            } else {
                s->overlong = true;
            }
            if (nl) {
                if (!s->overlong)
                    scan_line(s, s->line, s->ll);
                s->ll = 0;
                s->overlong = false;
            }
        } else {
            scan_line(s, buf, take);
        }
        if (!nl)
            break;
        buf = nl + 1;
        len -= take + 1;
    }
}

/* A plain or gzip'd file (zlib reads a plain one as it is). */
static int scan_gz(struct scan *s, const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return -1;
    gzbuffer(f, CHUNK);
    char *buf = malloc(CHUNK);
    int r = -1;
    while (buf && (r = gzread(f, buf, CHUNK)) > 0)
        scan_feed(s, buf, (size_t)r);
    int err;
    gzerror(f, &err);
    gzclose(f);
    free(buf);
    return r < 0 || (err != Z_OK && err != Z_BUF_ERROR) ? -1 : 0;
}

/* An LZ4 frame file (what Debian's container images keep: their apt
 * configuration stores the lists compressed). */
static int scan_lz4(struct scan *s, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    LZ4F_dctx *dctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
        close(fd);
        return -1;
    }
    char *in = malloc(CHUNK), *out = malloc(OUT_CHUNK);
    int rc = in && out ? 0 : -1;
    ssize_t got = 0;
    while (rc == 0 && (got = read(fd, in, CHUNK)) > 0) {
        size_t pos = 0;
        while (pos < (size_t)got) {
            size_t out_len = OUT_CHUNK, in_len = (size_t)got - pos;
            size_t hint = LZ4F_decompress(dctx, out, &out_len, in + pos, &in_len, NULL);
            if (LZ4F_isError(hint)) {
                rc = -1;
                break;
            }
            pos += in_len;
            scan_feed(s, out, out_len);
        }
    }
    if (got < 0)
        rc = -1;
    /* what is still inside the decoder for a frame whose input has all been given */
    for (size_t out_len = OUT_CHUNK, in_len = 0; rc == 0; out_len = OUT_CHUNK, in_len = 0) {
        size_t hint = LZ4F_decompress(dctx, out, &out_len, in, &in_len, NULL);
        if (LZ4F_isError(hint))
            rc = -1;
        else
            scan_feed(s, out, out_len);
        if (!out_len)
            break;
    }
    LZ4F_freeDecompressionContext(dctx);
    free(in);
    free(out);
    close(fd);
    return rc;
}

/* How a list file is read, by the end of its name: 'g' plain or gzip,
 * 'l' lz4, 's' not a package list, 0 a package list not read here. */
static char list_kind(const char *name)
{
    const char *p = strstr(name, "_Packages");
    if (!p)
        return 's';
    p += 9;
    if (!*p || !strcmp(p, ".gz"))
        return 'g';
    if (!strcmp(p, ".lz4"))
        return 'l';
    if (!strcmp(p, ".diff_Index"))
        return 's';
    return 0;
}

int cli_aptlists_known(const char *lists_dir, const char *status_file, const char *const *names, size_t n,
                       bool *seen)
{
    struct scan s = { .names = names, .n = n, .seen = seen };
    for (size_t i = 0; i < n; i++)
        seen[i] = false;
    if (!lists_dir)
        lists_dir = "/var/lib/apt/lists";
    if (!status_file)
        status_file = "/var/lib/dpkg/status";
    DIR *d = opendir(lists_dir);
    if (!d)
        return -1;
    int rc = 0, lists = 0;
    struct dirent *e;
    char path[4096];
    while (rc == 0 && (e = readdir(d))) {
        char kind = list_kind(e->d_name);
        if (kind == 's')
            continue;
        if (!kind) {
            rc = -1;
            break;
        }
        snprintf(path, sizeof(path), "%s/%s", lists_dir, e->d_name);
        s.ll = 0;
        s.overlong = false;
        rc = kind == 'l' ? scan_lz4(&s, path) : scan_gz(&s, path);
        lists++;
    }
    closedir(d);
    if (rc < 0 || !lists)
        return -1;
    s.ll = 0;
    s.overlong = false;
    if (access(status_file, R_OK) == 0 && scan_gz(&s, status_file) < 0)
        return -1;
    return 0;
}
