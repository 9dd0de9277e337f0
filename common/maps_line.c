/* maps_line.c - one line of /proc/PID/maps, parsed in place. */
#include "common/maps_line.h"

#include <string.h>

static bool parse_num(const char **pp, const char *end, unsigned base, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0;
    unsigned digits = 0;
    while (p < end && digits < 20) {
        char c = *p;
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        v = v * base + d;
        p++;
        digits++;
    }
    if (!digits)
        return false;
    *pp = p;
    *out = v;
    return true;
}

static void skip_spaces(const char **pp, const char *end)
{
    while (*pp < end && **pp == ' ')
        (*pp)++;
}

bool hi_maps_line_parse(const char *p, const char *end, struct hi_maps_line *m)
{
    uint64_t dmaj, dmin;
    memset(m, 0, sizeof(*m));
    if (!parse_num(&p, end, 16, &m->start) || p >= end || *p++ != '-' || !parse_num(&p, end, 16, &m->end) ||
        p >= end || *p++ != ' ' || end - p < 5)
        return false;
    memcpy(m->perms, p, 4);
    p += 4;
    if (*p++ != ' ' || !parse_num(&p, end, 16, &m->offset))
        return false;
    skip_spaces(&p, end);
    if (parse_num(&p, end, 16, &dmaj) && p < end && *p == ':') {
        p++;
        if (parse_num(&p, end, 16, &dmin)) {
            m->dev_major = (unsigned)dmaj;
            m->dev_minor = (unsigned)dmin;
        }
    }
    skip_spaces(&p, end);
    parse_num(&p, end, 10, &m->inode);
    skip_spaces(&p, end);
    if (p < end) {
        static const char deleted[] = " (deleted)";
        const size_t dl = sizeof(deleted) - 1;
        m->path = p;
        m->pathlen = (size_t)(end - p);
        if (m->pathlen > dl && !memcmp(end - dl, deleted, dl)) {
            m->pathlen -= dl;
            m->deleted = true;
        }
    }
    return m->end > m->start;
}

bool hi_maps_lines_next(struct hi_maps_lines *it, const char **line, const char **line_end)
{
    if (!it->p || it->p >= it->end)
        return false;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    if (!nl && it->whole)
        return false;
    *line = it->p;
    *line_end = nl ? nl : it->end;
    it->p = nl ? nl + 1 : it->end;
    return true;
}

bool hi_maps_lines_next_parsed(struct hi_maps_lines *it, struct hi_maps_line *m)
{
    const char *line, *line_end;
    while (hi_maps_lines_next(it, &line, &line_end))
        if (hi_maps_line_parse(line, line_end, m))
            return true;
    return false;
}
