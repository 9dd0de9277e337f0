/* smaps.c - /proc/PID/smaps into an array of mappings.
 *
 * A process with 10,000 mappings has a smaps file of several MB; it is
 * read in one go into a growing buffer and parsed with strtoull, no
 * sscanf, so the parse stays a small part of the kernel's own cost of
 * generating the file (bench/smaps_bench.c). */
#include "cli/memory/smaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_name(struct cli_smaps *s, const char *p, size_t n, size_t *off)
{
    if (s->names_len + n + 1 > s->names_cap) {
        size_t nc = s->names_cap ? s->names_cap * 2 : 16384;
        while (nc < s->names_len + n + 1)
            nc *= 2;
        char *nn = realloc(s->names, nc);
        if (!nn)
            return -ENOMEM;
        s->names = nn;
        s->names_cap = nc;
    }
    *off = s->names_len;
    memcpy(s->names + s->names_len, p, n);
    s->names[s->names_len + n] = '\0';
    s->names_len += n + 1;
    return 0;
}

/* "start-end perms offset dev inode   path" */
static int parse_vma_line(struct cli_smaps *s, const char *line, const char *eol, size_t *name_off)
{
    struct cli_smaps_vma v;
    char *e;
    memset(&v, 0, sizeof(v));
    v.start = strtoull(line, &e, 16);
    if (*e != '-')
        return -EINVAL;
    v.end = strtoull(e + 1, &e, 16);
    if (*e != ' ' || v.end < v.start || eol - e < 6)
        return -EINVAL;
    memcpy(v.perms, e + 1, 4);
    v.perms[4] = '\0';
    v.offset = strtoull(e + 6, &e, 16);
    while (e < eol && *e == ' ')
        e++;
    while (e < eol && *e != ' ') /* dev major:minor */
        e++;
    v.inode = strtoull(e, &e, 10);
    while (e < eol && *e == ' ')
        e++;
    *name_off = (size_t)-1;
    if (e < eol && add_name(s, e, (size_t)(eol - e), name_off) < 0)
        return -ENOMEM;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        struct cli_smaps_vma *nv = realloc(s->v, nc * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = v;
    return 0;
}

/* "Key:   123 kB" -> bytes */
static uint64_t kb_value(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return strtoull(p, NULL, 10) * 1024u;
}

int cli_smaps_parse(const char *text, size_t len, struct cli_smaps *s)
{
    size_t *offs = NULL, noffs = 0, capoffs = 0;
    int rc = 0;
    memset(s, 0, sizeof(*s));
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        /* A mapping line starts with a hex digit and has '-' in its first
         * word; a key line starts with a capital letter and has ':'. */
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) {
            size_t off;
            if ((rc = parse_vma_line(s, p, eol, &off)) < 0)
                goto out;
            if (noffs == capoffs) {
                size_t nc = capoffs ? capoffs * 2 : 256;
                size_t *no = realloc(offs, nc * sizeof(*no));
                if (!no) {
                    rc = -ENOMEM;
                    goto out;
                }
                offs = no;
                capoffs = nc;
            }
            offs[noffs++] = off;
        } else if (s->n) {
            struct cli_smaps_vma *v = &s->v[s->n - 1];
            if (eol - p > 4 && memcmp(p, "Rss:", 4) == 0) {
                v->rss = kb_value(p + 4);
                s->rss += v->rss;
            } else if (eol - p > 10 && memcmp(p, "Anonymous:", 10) == 0) {
                v->anon = kb_value(p + 10);
            } else if (eol - p > 5 && memcmp(p, "Swap:", 5) == 0) {
                v->swap = kb_value(p + 5);
            } else if (eol - p > 8 && memcmp(p, "VmFlags:", 8) == 0) {
                for (const char *f = p + 8; f + 2 <= eol; f++)
                    if (f[-1] == ' ' && f[0] == 'd' && f[1] == 'c' && (f + 2 == eol || f[2] == ' '))
                        v->dontfork = true;
            }
        }
        p = eol + 1;
    }
    /* Names are pointers into s->names only now that it stopped moving. */
    for (size_t i = 0; i < s->n; i++)
        s->v[i].path = offs[i] == (size_t)-1 ? NULL : s->names + offs[i];
out:
    free(offs);
    if (rc < 0)
        cli_smaps_free(s);
    return rc;
}

int cli_smaps_read(pid_t pid, struct cli_smaps *s)
{
    char path[64];
    memset(s, 0, sizeof(*s));
    snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* 4 MiB: the smaps of ~15,000 mappings without a realloc. */
    size_t cap = 4u << 20, len = 0;
    char *buf = malloc(cap);
    int rc = 0;
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    for (;;) {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    if (rc == 0)
        rc = cli_smaps_parse(buf, len, s);
    /* An empty file: a zombie, or a kernel thread. */
    if (rc == 0 && s->n == 0)
        rc = -ESRCH;
    free(buf);
    return rc;
}

void cli_smaps_free(struct cli_smaps *s)
{
    free(s->v);
    free(s->names);
    memset(s, 0, sizeof(*s));
}
