/* read.c - read a saved profile: the file, its format, the errors. */
#include "cli/profile/read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/util/exitcode.h"

enum cli_profile_kind cli_profile_detect(const void *data, size_t len)
{
    const unsigned char *d = data;
    size_t i = 0;
    if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
        return CLI_PROFILE_PPROF;
    /* JSON may start with a byte-order mark or white space. */
    if (len >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf)
        i = 3;
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
        i++;
    if (i < len && d[i] == '{')
        return CLI_PROFILE_JSON;
    static const char heap[] = "heap profile:";
    if (len - i >= sizeof(heap) - 1 && !memcmp(d + i, heap, sizeof(heap) - 1))
        return CLI_PROFILE_HEAP;
    return CLI_PROFILE_UNKNOWN;
}

int cli_profile_read_vbad(char *why, size_t whylen, const char *fmt, va_list ap)
{
    if (why && whylen)
        vsnprintf(why, whylen, fmt, ap);
    return -EBADMSG;
}

int cli_profile_read_bad(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_profile_read_vbad(why, whylen, fmt, ap);
    va_end(ap);
    return rc;
}


int cli_profile_read_mem(const void *data, size_t len, struct cli_profile *p,
                         enum cli_profile_kind *kind, char *why, size_t whylen)
{
    enum cli_profile_kind k = cli_profile_detect(data, len);
    int err;

    memset(p, 0, sizeof(*p));
    if (kind)
        *kind = k;
    if (why && whylen)
        why[0] = '\0';
    if (!len)
        return cli_profile_read_bad(why, whylen, "empty file");
    if (len > CLI_PROFILE_READ_MAX_BYTES)
        return cli_profile_read_bad(why, whylen, "larger than %u MiB", CLI_PROFILE_READ_MAX_BYTES >> 20);
    switch (k) {
    case CLI_PROFILE_PPROF:
        err = cli_profile_read_pprof(data, len, p, why, whylen);
        break;
    case CLI_PROFILE_HEAP:
        err = cli_profile_read_heap(data, len, p, why, whylen);
        break;
    case CLI_PROFILE_JSON:
        err = cli_profile_read_json(data, len, p, why, whylen);
        break;
    default:
        return cli_profile_read_bad(why, whylen, "neither JSON, gzipped pprof nor heap profile text; "
                                "collapsed, svg, massif and series files cannot be read back");
    }
    if (err) {
        cli_profile_free(p);
        if (err == -EBADMSG && why && whylen && !why[0])
            cli_profile_read_bad(why, whylen, "corrupt");
    }
    return err;
}

int cli_profile_read(const char *path, struct cli_profile *p, enum cli_profile_kind *kind,
                     char *why, size_t whylen)
{
    struct stat st;
    char *data = NULL;
    size_t len = 0, cap;
    int err = 0;

    memset(p, 0, sizeof(*p));
    if (kind)
        *kind = CLI_PROFILE_UNKNOWN;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        err = -errno;
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        err = -EISDIR;
        goto out;
    }
    if (st.st_size > (off_t)CLI_PROFILE_READ_MAX_BYTES) {
        err = cli_profile_read_bad(why, whylen, "larger than %u MiB", CLI_PROFILE_READ_MAX_BYTES >> 20);
        goto out;
    }
    /* Read to the end, not st_size bytes: pipes and /proc files say 0. */
    cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
    data = malloc(cap);
    if (!data) {
        err = -ENOMEM;
        goto out;
    }
    for (;;) {
        if (len == cap) {
            if (cap > CLI_PROFILE_READ_MAX_BYTES) {
                err = cli_profile_read_bad(why, whylen, "larger than %u MiB", CLI_PROFILE_READ_MAX_BYTES >> 20);
                goto out;
            }
            char *nd = realloc(data, cap * 2);
            if (!nd) {
                err = -ENOMEM;
                goto out;
            }
            data = nd;
            cap *= 2;
        }
        ssize_t r = read(fd, data + len, cap - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            err = -errno;
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    err = cli_profile_read_mem(data, len, p, kind, why, whylen);
out:
    if (err && err != -EBADMSG && why && whylen)
        snprintf(why, whylen, "%s", strerror(-err));
    free(data);
    if (fd >= 0)
        close(fd);
    return err;
}

int cli_profile_read_perror(const char *cmd, const char *path, int err, const char *why)
{
    if (err == -EBADMSG) {
        fprintf(stderr, "%s: %s: not a heapinject profile (%s)\n", cmd, path,
                why && why[0] ? why : "corrupt");
        return CLI_EXIT_BADFILE;
    }
    fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(-err));
    return CLI_EXIT_FAILURE;
}
