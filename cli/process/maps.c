/* maps.c - /proc/PID/maps text as an array of mappings, and naming an
 * address by the file mapped there. */
#include "cli/process/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/process/paths.h"
#include "common/maps_line.h"

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

int cli_maps_parse(const char *text, size_t len, struct cli_map **out, size_t *n)
{
    size_t cap = 0, cnt = 0;
    struct cli_map *maps = NULL;
    const char *p = text, *end = text ? text + len : NULL;

    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
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
        p = nl ? nl + 1 : end;
    }
    *out = maps;
    *n = cnt;
    return 0;
}

const struct cli_map *cli_maps_find(const struct cli_map *maps, size_t n, uint64_t addr)
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

const char *cli_maps_addr_name(uint64_t addr, const struct cli_map *maps, size_t nmaps,
                                 char *buf, size_t len)
{
    const struct cli_map *m = cli_maps_find(maps, nmaps, addr);
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
