/* formats.c - the table of file-format writers and the helpers they
 * share: value selection, maps parsing, stacks as locations, frame names,
 * growable buffers and small hash tables. */
#include "cli/report/formats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/target/paths.h"
#include "common/maps_line.h"

static const char *const value_names[] = {
    [CLI_VALUE_LIVE_BYTES] = "live_bytes",
    [CLI_VALUE_ALLOC_BYTES] = "alloc_bytes",
    [CLI_VALUE_LIVE_OBJECTS] = "live_objects",
    [CLI_VALUE_ALLOC_OBJECTS] = "alloc_objects",
};

int cli_format_value_parse(const char *name, enum cli_value *v)
{
    if (!name) {
        *v = CLI_VALUE_LIVE_BYTES;
        return 0;
    }
    for (size_t i = 0; i < sizeof(value_names) / sizeof(value_names[0]); i++) {
        if (!strcmp(name, value_names[i])) {
            *v = (enum cli_value)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *cli_format_value_name(enum cli_value v)
{
    return value_names[v];
}

double cli_format_stack_value(const struct cli_stack *s, enum cli_value v)
{
    switch (v) {
    case CLI_VALUE_LIVE_BYTES: return s->live_bytes;
    case CLI_VALUE_ALLOC_BYTES: return s->alloc_bytes;
    case CLI_VALUE_LIVE_OBJECTS: return s->live_objects;
    case CLI_VALUE_ALLOC_OBJECTS: return s->alloc_objects;
    }
    return 0;
}

/* ---- maps ---------------------------------------------------------------- */

/* A maps line as the writers use it. */
static bool parse_maps_line(const char *p, const char *end, struct cli_map *m)
{
    struct hi_maps_line l;
    memset(m, 0, sizeof(*m));
    if (!hi_maps_line_parse(p, end, &l))
        return false;
    m->start = l.start;
    m->end = l.end;
    m->offset = l.offset;
    memcpy(m->perms, l.perms, sizeof(m->perms));
    m->path = l.path;
    m->pathlen = l.pathlen;
    m->deleted = l.deleted;
    return true;
}

int cli_format_maps_parse(const char *text, size_t len, struct cli_map **out, size_t *n)
{
    size_t cap = 0, cnt = 0;
    struct cli_map *maps = NULL;
    struct hi_maps_lines it = hi_maps_lines_of(text, len);
    const char *p, *le;

    while (hi_maps_lines_next(&it, &p, &le)) {
        struct cli_map m;
        if (parse_maps_line(p, le, &m)) {
            if (cnt == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct cli_map *nm = realloc(maps, nc * sizeof(*nm));
                if (!nm) {
                    free(maps);
                    return -ENOMEM;
                }
                maps = nm;
                cap = nc;
            }
            maps[cnt++] = m;
        }
    }
    *out = maps;
    *n = cnt;
    return 0;
}

const struct cli_map *cli_format_maps_find(const struct cli_map *maps, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < maps[mid].start)
            hi = mid;
        else if (addr >= maps[mid].end)
            lo = mid + 1;
        else
            return &maps[mid];
    }
    /* /proc keeps maps sorted; a hand-edited file might not be. */
    for (size_t i = 0; i < n; i++)
        if (addr >= maps[i].start && addr < maps[i].end)
            return &maps[i];
    return NULL;
}

static bool is_own_map(const struct cli_map *m)
{
    return m && cli_paths_is_payload(m->path, m->pathlen);
}

int cli_format_stack_locs(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                          struct cli_format_loc **out, size_t *n)
{
    size_t cap = s->nframes ? s->nframes : s->npcs;
    struct cli_format_loc *locs = calloc(cap ? cap : 1, sizeof(*locs));
    size_t cnt = 0;

    if (!locs)
        return -ENOMEM;
    if (s->nframes && s->frames) {
        /* A location is a run of inlined frames closed by the physical one;
         * a run also ends where the address changes (defensive: a profile
         * read from a file may flag frames oddly). */
        uint32_t i = 0;
        while (i < s->nframes) {
            uint32_t j = i;
            while (j + 1 < s->nframes && s->frames[j].inlined &&
                   s->frames[j + 1].addr == s->frames[i].addr)
                j++;
            locs[cnt].addr = s->frames[i].addr;
            locs[cnt].frames = &s->frames[i];
            locs[cnt].nframes = j - i + 1;
            cnt++;
            i = j + 1;
        }
    } else {
        for (uint32_t i = 0; i < s->npcs && s->pcs; i++) {
            if (is_own_map(cli_format_maps_find(maps, nmaps, s->pcs[i])))
                continue;
            locs[cnt].addr = s->pcs[i];
            cnt++;
        }
    }
    *out = locs;
    *n = cnt;
    return 0;
}

const char *cli_format_basename(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

const char *cli_format_frame_name(const struct cli_frame *f, char *buf, size_t len)
{
    if (f->function && f->function[0])
        return f->function;
    if (f->module && f->module[0])
        snprintf(buf, len, "%s+0x%" PRIx64, cli_format_basename(f->module), f->module_offset);
    else
        snprintf(buf, len, "0x%" PRIx64, f->addr);
    return buf;
}

const char *cli_format_addr_name(uint64_t addr, const struct cli_map *maps, size_t nmaps,
                                 char *buf, size_t len)
{
    const struct cli_map *m = cli_format_maps_find(maps, nmaps, addr);
    if (m && m->pathlen) {
        const char *base = m->path;
        size_t bl = m->pathlen;
        for (size_t i = 0; i < m->pathlen; i++) {
            if (m->path[i] == '/') {
                base = m->path + i + 1;
                bl = m->pathlen - i - 1;
            }
        }
        /* Offset in the file, like the module offsets of symbolized frames. */
        snprintf(buf, len, "%.*s+0x%" PRIx64, (int)bl, base, addr - m->start + m->offset);
    } else {
        snprintf(buf, len, "0x%" PRIx64, addr);
    }
    return buf;
}

/* ---- buffers ------------------------------------------------------------- */

static int buf_reserve(struct cli_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + extra + 1)
        nc *= 2;
    char *nd = realloc(b->data, nc);
    if (!nd)
        return -ENOMEM;
    b->data = nd;
    b->cap = nc;
    return 0;
}

int cli_buf_add(struct cli_buf *b, const void *data, size_t len)
{
    if (buf_reserve(b, len))
        return -ENOMEM;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int cli_buf_addc(struct cli_buf *b, char c)
{
    return cli_buf_add(b, &c, 1);
}

int cli_buf_addf(struct cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return -EINVAL;
    if (buf_reserve(b, (size_t)need))
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
    return 0;
}

int cli_format_write_all(FILE *out, const void *data, size_t len)
{
    if (len && fwrite(data, 1, len, out) != len)
        return -EIO;
    return 0;
}

/* ---- interned strings and id maps (on the cli's one hash table) -------- */

struct strtab_key {
    const struct cli_strtab *t;
    const char *s;
    size_t len;
};

static bool strtab_same(size_t entry, const void *ctx)
{
    const struct strtab_key *k = ctx;
    const char *c = k->t->strs[entry];
    return strlen(c) == k->len && !memcmp(c, k->s, k->len);
}

long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len)
{
    if (!s) {
        s = "";
        len = 0;
    }
    uint64_t h = cli_hash_bytes(s, len, 0);
    struct strtab_key key = { t, s, len };
    long found = cli_hindex_find(&t->index, h, strtab_same, &key);
    if (found >= 0)
        return found;
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->strs, nc * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        t->strs = ns;
        t->cap = nc;
    }
    char *copy = strndup(s, len);
    if (!copy)
        return -ENOMEM;
    if (cli_hindex_add(&t->index, h, t->n) < 0) {
        free(copy);
        return -ENOMEM;
    }
    t->strs[t->n] = copy;
    return (long)t->n++;
}

long cli_strtab_intern(struct cli_strtab *t, const char *s)
{
    return cli_strtab_intern_len(t, s, s ? strlen(s) : 0);
}

void cli_strtab_free(struct cli_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    cli_hindex_free(&t->index);
    memset(t, 0, sizeof(*t));
}

int cli_u64map_get(const struct cli_u64map *m, uint64_t key, uint64_t *val)
{
    long e = cli_hindex_find(&m->index, key, NULL, NULL);
    if (e < 0)
        return -ENOENT;
    *val = m->vals[e];
    return 0;
}

int cli_u64map_put(struct cli_u64map *m, uint64_t key, uint64_t val)
{
    long e = cli_hindex_find(&m->index, key, NULL, NULL);
    if (e >= 0) {
        m->vals[e] = val;
        return 0;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        uint64_t *nv = realloc(m->vals, nc * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        m->vals = nv;
        m->cap = nc;
    }
    if (cli_hindex_add(&m->index, key, m->n) < 0)
        return -ENOMEM;
    m->vals[m->n++] = val;
    return 0;
}

void cli_u64map_free(struct cli_u64map *m)
{
    free(m->vals);
    cli_hindex_free(&m->index);
    memset(m, 0, sizeof(*m));
}
