/* views.c - groups folded by type, by size, and the unreachable ones. */
#include "cli/census/views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_bytes(const void *x, const void *y)
{
    const struct cli_census_row *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return 0;
}

static int cmp_unreachable(const void *x, const void *y)
{
    const struct cli_census_row *a = x, *b = y;
    if (a->unreachable_bytes != b->unreachable_bytes)
        return a->unreachable_bytes < b->unreachable_bytes ? 1 : -1;
    return cmp_bytes(x, y);
}

static int cmp_key(const void *x, const void *y)
{
    const struct cli_census_row *a = x, *b = y;
    if (a->type != b->type) {
        if (!a->type || !b->type)
            return a->type ? 1 : -1;
        int d = strcmp(a->type, b->type);
        if (d)
            return d;
    }
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return 0;
}

/* One row per group with the view's key, sorted by key, adjacent rows of
 * one key folded, then sorted by bytes. */
int cli_census_view(const struct cli_census *c, enum cli_census_view v, struct cli_census_row **rows, size_t *n)
{
    if (c->saved) {
        size_t k = v < CLI_CENSUS_BY_GROUP ? (size_t)v : 0, ns = v < CLI_CENSUS_BY_GROUP ? c->saved->n[k] : 0;
        struct cli_census_row *s = calloc(ns + 1, sizeof(*s));
        if (!s)
            return -ENOMEM;
        if (ns)
            memcpy(s, c->saved->rows[k], ns * sizeof(*s));
        *rows = s;
        *n = ns;
        return 0;
    }
    struct cli_census_row *r = calloc(c->ngroups + 1, sizeof(*r));
    size_t nr = 0;
    if (!r)
        return -ENOMEM;
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct hi_census_group *g = &c->groups[i];
        const char *type = c->group_type ? c->group_type[i] : NULL;
        if (v == CLI_CENSUS_BY_TYPE && !type)
            continue;
        if (v == CLI_CENSUS_UNREACHABLE && !g->unreachable_blocks)
            continue;
        struct cli_census_row *row = &r[nr++];
        row->type = v == CLI_CENSUS_BY_SIZE ? NULL : type;
        row->size = v == CLI_CENSUS_BY_TYPE ? 0 : g->size;
        row->blocks = g->blocks;
        row->bytes = g->blocks * g->size;
        row->unreachable_blocks = g->unreachable_blocks;
        row->unreachable_bytes = g->unreachable_blocks * g->size;
        row->since_attach_blocks = g->since_attach_blocks;
        row->since_attach_bytes = g->since_attach_bytes;
        row->since_attach_stack = c->group_stack ? c->group_stack[i] : NULL;
        row->since_attach_stack_bytes = row->since_attach_stack ? g->top_stack_bytes : 0;
        row->preview = v == CLI_CENSUS_UNREACHABLE ? g->unreachable_preview : g->preview;
        row->preview_len = g->size < HI_CENSUS_PREVIEW ? g->size : HI_CENSUS_PREVIEW;
    }
    qsort(r, nr, sizeof(*r), cmp_key);
    size_t w = 0;
    for (size_t i = 0; i < nr; i++) {
        if (w && !cmp_key(&r[w - 1], &r[i])) {
            struct cli_census_row *d = &r[w - 1];
            d->blocks += r[i].blocks;
            d->bytes += r[i].bytes;
            d->unreachable_blocks += r[i].unreachable_blocks;
            d->unreachable_bytes += r[i].unreachable_bytes;
            d->since_attach_blocks += r[i].since_attach_blocks;
            d->since_attach_bytes += r[i].since_attach_bytes;
            if (r[i].since_attach_stack_bytes > d->since_attach_stack_bytes) { /* the larger one names the row */
                d->since_attach_stack = r[i].since_attach_stack;
                d->since_attach_stack_bytes = r[i].since_attach_stack_bytes;
            }
            continue;
        }
        r[w++] = r[i];
    }
    nr = w;
    qsort(r, nr, sizeof(*r), v == CLI_CENSUS_UNREACHABLE ? cmp_unreachable : cmp_bytes);
    *rows = r;
    *n = nr;
    return 0;
}

void cli_census_drop_since_attach(struct cli_census *c)
{
    for (size_t i = 0; i < c->ngroups; i++) {
        c->groups[i].since_attach_blocks = 0;
        c->groups[i].since_attach_bytes = 0;
        c->groups[i].top_stack_nframes = 0; /* no stack to name either */
        c->groups[i].top_stack_bytes = 0;
    }
}

const char *cli_census_preview(const uint8_t *p, uint64_t len, char *buf, size_t buflen)
{
    size_t o = 0;
    buf[0] = '\0';
    if (!p)
        return buf;
    if (len > 16)
        len = 16; /* one line; JSON has all 32 bytes */
    for (uint64_t i = 0; i < len && o + 4 < buflen; i++)
        o += (size_t)snprintf(buf + o, buflen - o, "%02x ", p[i]);
    if (o + len + 3 < buflen) {
        buf[o++] = '|';
        for (uint64_t i = 0; i < len; i++)
            buf[o++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.';
        buf[o++] = '|';
        buf[o] = '\0';
    }
    return buf;
}

size_t cli_census_view_total(const struct cli_census *c, enum cli_census_view v, size_t n)
{
    return c->saved && v < CLI_CENSUS_BY_GROUP && c->saved->total[v] > n ? c->saved->total[v] : n;
}

size_t cli_census_roots_held(const struct cli_census *c)
{
    size_t held = 0;
    for (size_t i = 0; i < c->nroots; i++)
        held += c->roots[i].retained_blocks != 0;
    return c->saved && c->saved->roots_total > held ? c->saved->roots_total : held;
}

void cli_census_saved_free(struct cli_census_saved *s)
{
    if (!s)
        return;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < s->n[k]; i++) {
            free((char *)s->rows[k][i].type);
            free((char *)s->rows[k][i].since_attach_stack);
            free((uint8_t *)s->rows[k][i].preview);
        }
        free(s->rows[k]);
    }
    free(s);
}
