/* read_heap.c - gperftools heap profile text back into a cli_profile
 * (the format of cli/report/heap.c; see FORMATS.md).
 *
 * Lines carry raw sampled counts and raw return addresses, innermost first.
 * Estimates are unbiased the way the readers of the format do it, from each
 * line's average block size: scale = 1 / (1 - exp(-(bytes/objs) / rate)).
 * Stacks get PCs only (no frames): symbolize them against the maps text
 * that follows "MAPPED_LIBRARIES:".
 */
#include "cli/profile/read.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More addresses than any stack we write (HI_MAX_FRAMES) with room for
 * other writers; longer lines are refused rather than cut. */
#define MAX_LINE_PCS 1024u


struct cursor {
    const char *p, *end;
};

static void skip_spaces(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

static bool eat(struct cursor *c, char ch)
{
    skip_spaces(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool parse_u64(struct cursor *c, uint64_t *out)
{
    skip_spaces(c);
    uint64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        c->p++;
    }
    *out = v;
    return c->p > start;
}

static bool parse_addr(struct cursor *c, uint64_t *out)
{
    skip_spaces(c);
    if (c->end - c->p >= 2 && c->p[0] == '0' && (c->p[1] == 'x' || c->p[1] == 'X'))
        c->p += 2;
    uint64_t v = 0;
    int digits = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            d = (unsigned)(ch - 'A' + 10);
        else
            break;
        if (++digits > 16)
            return false;
        v = v << 4 | d;
        c->p++;
    }
    *out = v;
    return digits > 0;
}

/* "<objs>: <bytes> [<objs>: <bytes>]" */
static bool parse_counts(struct cursor *c, uint64_t v[4])
{
    return parse_u64(c, &v[0]) && eat(c, ':') && parse_u64(c, &v[1]) && eat(c, '[') &&
           parse_u64(c, &v[2]) && eat(c, ':') && parse_u64(c, &v[3]) && eat(c, ']');
}

static void unbias(uint64_t objs, uint64_t bytes, uint64_t rate, double *eobjs, double *ebytes)
{
    double scale = 1;
    if (rate > 1 && objs > 0 && bytes > 0) {
        double p = -expm1(-((double)bytes / (double)objs) / (double)rate);
        if (p > 0)
            scale = 1 / p;
    }
    *eobjs = (double)objs * scale;
    *ebytes = (double)bytes * scale;
}

static bool at_eol(struct cursor *c)
{
    skip_spaces(c);
    return c->p >= c->end || *c->p == '\r';
}

static int read_heap(const char *text, size_t len, struct cli_profile *p, char *why, size_t whylen)
{
    const char *p0 = text, *end = text + len;
    uint64_t hdr[4], sum[4] = { 0 }, pcs[MAX_LINE_PCS];
    size_t cap = 0, lineno = 1;

    memset(p, 0, sizeof(*p));
    if (memchr(text, '\0', len))
        return cli_profile_read_bad(why, whylen, "binary data in heap profile text");

    /* Header (cli_profile_detect() allows a byte-order mark and blank space
     * before it). */
    if (len >= 3 && !memcmp(p0, "\xef\xbb\xbf", 3))
        p0 += 3;
    while (p0 < end && (*p0 == ' ' || *p0 == '\t' || *p0 == '\n' || *p0 == '\r'))
        p0++;
    if ((size_t)(end - p0) < strlen("heap profile:") || memcmp(p0, "heap profile:", 13))
        return cli_profile_read_bad(why, whylen, "does not start with \"heap profile:\"");
    const char *nl = memchr(p0, '\n', (size_t)(end - p0));
    struct cursor c = { p0 + strlen("heap profile:"), nl ? nl : end };
    if (!parse_counts(&c, hdr) || !eat(&c, '@'))
        return cli_profile_read_bad(why, whylen, "heap profile header does not parse (line 1)");
    skip_spaces(&c);
    size_t tl = (size_t)(c.end - c.p);
    while (tl && (c.p[tl - 1] == '\r' || c.p[tl - 1] == ' '))
        tl--;
    if (tl == strlen("heapprofile") && !memcmp(c.p, "heapprofile", tl)) {
        p->rate = 1;
    } else if (tl > 8 && !memcmp(c.p, "heap_v2/", 8)) {
        struct cursor r = { c.p + 8, c.p + tl };
        if (!parse_u64(&r, &p->rate) || r.p != r.end || !p->rate)
            return cli_profile_read_bad(why, whylen, "heap profile sampling rate does not parse (line 1)");
    } else {
        return cli_profile_read_bad(why, whylen, "heap profile of type \"%.*s\"; only heapprofile and heap_v2/RATE "
                                "are read", (int)(tl > 40 ? 40 : tl), c.p);
    }

    const char *line = nl ? nl + 1 : end;
    bool maps_seen = false;
    while (line < end) {
        lineno++;
        nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        struct cursor lc = { line, le };
        const char *next = nl ? nl + 1 : end;
        if (at_eol(&lc)) {
            line = next;
            continue;
        }
        if ((size_t)(le - lc.p) >= 17 && !memcmp(lc.p, "MAPPED_LIBRARIES:", 17)) {
            maps_seen = true;
            line = next;
            break;
        }
        if (lc.p < lc.end && *lc.p == 't')
            return cli_profile_read_bad(why, whylen, "jemalloc's own heap profile format (read it with jeprof), "
                                    "not one heapinject writes");
        uint64_t v[4];
        if (!parse_counts(&lc, v) || !eat(&lc, '@'))
            return cli_profile_read_bad(why, whylen, "line %zu does not parse as \"objs: bytes [objs: bytes] @ addrs\"",
                       lineno);
        size_t npcs = 0;
        while (!at_eol(&lc)) {
            if (npcs == MAX_LINE_PCS)
                return cli_profile_read_bad(why, whylen, "line %zu has more than %u addresses", lineno, MAX_LINE_PCS);
            if (!parse_addr(&lc, &pcs[npcs]))
                return cli_profile_read_bad(why, whylen, "line %zu: bad address", lineno);
            npcs++;
        }
        if (p->nstacks == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct cli_stack *ns = realloc(p->stacks, nc * sizeof(*ns));
            if (!ns)
                return -ENOMEM;
            p->stacks = ns;
            cap = nc;
        }
        struct cli_stack *s = &p->stacks[p->nstacks];
        memset(s, 0, sizeof(*s));
        s->pcs = malloc((npcs ? npcs : 1) * sizeof(*s->pcs));
        if (!s->pcs)
            return -ENOMEM;
        p->nstacks++;
        memcpy(s->pcs, pcs, npcs * sizeof(*pcs));
        s->npcs = (uint32_t)npcs;
        s->raw_live_objects = v[0];
        s->raw_live_bytes = v[1];
        s->raw_alloc_objects = v[2];
        s->raw_alloc_bytes = v[3];
        unbias(v[0], v[1], p->rate, &s->live_objects, &s->live_bytes);
        unbias(v[2], v[3], p->rate, &s->alloc_objects, &s->alloc_bytes);
        for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
            s->growth[g] = -1;
        p->totals.est_live_bytes += (uint64_t)llround(s->live_bytes);
        p->totals.est_live_objects += (uint64_t)llround(s->live_objects);
        p->totals.est_alloc_bytes += (uint64_t)llround(s->alloc_bytes);
        p->totals.est_alloc_objects += (uint64_t)llround(s->alloc_objects);
        p->totals.raw_samples += v[2];
        for (int k = 0; k < 4; k++)
            sum[k] += v[k];
        line = next;
    }
    /* The header holds the sums of the lines; the maps close the file. */
    if (memcmp(sum, hdr, sizeof(sum)))
        return cli_profile_read_bad(why, whylen, "truncated or corrupt: the stacks add up to %" PRIu64 ": %" PRIu64
                                " [%" PRIu64 ": %" PRIu64 "], the header says %" PRIu64 ": %" PRIu64
                                " [%" PRIu64 ": %" PRIu64 "]",
                   sum[0], sum[1], sum[2], sum[3], hdr[0], hdr[1], hdr[2], hdr[3]);
    if (!maps_seen)
        return cli_profile_read_bad(why, whylen, "truncated: no MAPPED_LIBRARIES section");
    p->totals.buckets = p->nstacks;
    if (maps_seen && line < end) {
        p->maps_len = (size_t)(end - line);
        p->maps = malloc(p->maps_len + 1);
        if (!p->maps)
            return -ENOMEM;
        memcpy(p->maps, line, p->maps_len);
        p->maps[p->maps_len] = '\0';
    }
    return 0;
}

int cli_profile_read_heap(const char *text, size_t len, struct cli_profile *p, char *why,
                          size_t whylen)
{
    int err = read_heap(text, len, p, why, whylen);
    if (err)
        cli_profile_free(p);
    return err;
}
