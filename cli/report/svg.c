/* svg.c - an interactive flame graph as one self-contained SVG file
 * (no external scripts, fonts or styles), in the manner of Brendan Gregg's
 * flamegraph.pl: the root at the bottom, callers below callees, widths
 * proportional to the chosen value (--value, default live bytes).
 *
 * Frames with the same name under the same parent merge, as in every flame
 * graph. Each frame carries its data (name, file:line, value, position as a
 * fraction of the whole) in data-* attributes; the inline script uses them
 * to show details on hover, zoom on click (click the bottom frame, "Reset
 * zoom" or Esc to go back) and highlight a regular-expression search typed
 * in the search box (with the matched share). A link can open a view:
 * file.svg#zoom=NAME&search=REGEX. Frame labels are already cut to fit, so
 * the picture is right even where scripts do not run.
 */
#include "cli/report/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/fmt.h"
#include "cli/report/collapsed_names.h"
#include "cli/report/svg_script.h"

#define SVG_WIDTH 1200
#define SVG_PAD 10
#define FRAME_H 16
#define HEAD_H 66
#define FOOT_H 34
#define FONT_PX 12
#define CHAR_W 7.0   /* average glyph width of 12px Verdana/DejaVu Sans */
#define MIN_W 0.1    /* frames narrower than this (px) are left out */

struct snode {
    long name;           /* string table index */
    long where;          /* "file:line" index, -1 when the merged frames differ */
    double value;
    size_t first_child, next_sibling; /* pool indexes, 0 = none */
};

struct sgraph {
    struct snode *nodes; /* nodes[0] = "all" */
    size_t n, cap;
    struct cli_strtab strs;
    int max_depth;
};

static long child_of(struct sgraph *g, size_t parent, long name, long where)
{
    size_t c;
    for (c = g->nodes[parent].first_child; c; c = g->nodes[c].next_sibling) {
        if (g->nodes[c].name == name) {
            if (g->nodes[c].where != where)
                g->nodes[c].where = -1;
            return (long)c;
        }
    }
    if (g->n == g->cap) {
        size_t nc = g->cap * 2;
        struct snode *nn = realloc(g->nodes, nc * sizeof(*nn));
        if (!nn)
            return -ENOMEM;
        g->nodes = nn;
        g->cap = nc;
    }
    c = g->n++;
    g->nodes[c] = (struct snode){ name, where, 0, 0, g->nodes[parent].first_child };
    g->nodes[parent].first_child = c;
    return (long)c;
}

static int add_frame(struct sgraph *g, size_t *cur, int *depth, const char *name,
                     const struct cli_frame *f, double value)
{
    char where[512] = "";
    if (f && f->file)
        snprintf(where, sizeof(where), "%s:%d", f->file, f->line);
    else if (f && f->module)
        snprintf(where, sizeof(where), "%s", f->module);
    long ni = cli_strtab_intern(&g->strs, name), wi = cli_strtab_intern(&g->strs, where);
    if (ni < 0 || wi < 0)
        return -ENOMEM;
    long c = child_of(g, *cur, ni, wi);
    if (c < 0)
        return -ENOMEM;
    *cur = (size_t)c;
    g->nodes[c].value += value;
    if (++*depth > g->max_depth)
        g->max_depth = *depth;
    return 0;
}

static int add_stack(struct sgraph *g, const struct cli_stack *s, double value,
                     const struct cli_map *maps, size_t nmaps)
{
    struct cli_stack_loc *locs;
    size_t nlocs, cur = 0;
    int depth = 0, err = 0;
    char buf[512];

    if (cli_stack_locs(s, maps, nmaps, &locs, &nlocs))
        return -ENOMEM;
    g->nodes[0].value += value;
    for (size_t k = nlocs; !err && k-- > 0;) {
        if (!locs[k].frames) {
            err = add_frame(g, &cur, &depth,
                            cli_maps_addr_name(locs[k].addr, maps, nmaps, buf, sizeof(buf)),
                            NULL, value);
            continue;
        }
        for (uint32_t f = locs[k].nframes; !err && f-- > 0;)
            err = add_frame(g, &cur, &depth,
                            cli_collapsed_frame_label(&locs[k].frames[f], buf, sizeof(buf)),
                            &locs[k].frames[f], value);
    }
    /* Direct mmap (issue 14): a leaf of its own, as in collapsed stacks. */
    if (!err && s->kind == HI_KIND_MMAP)
        err = add_frame(g, &cur, &depth, "[mmap]", NULL, value);
    if (!err && s->kind == HI_KIND_PYMALLOC) /* objects inside pymalloc's arenas (issue 29) */
        err = add_frame(g, &cur, &depth, "[pymalloc]", NULL, value);
    free(locs);
    return err;
}

/* XML text: escapes markup characters, drops control characters, and
 * replaces bytes that are not valid UTF-8 with '?', so that the file always
 * parses. At most max_chars characters (0 = all); returns the count. */
static size_t put_xml(struct cli_buf *b, const char *s, size_t max_chars, int *err)
{
    size_t chars = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && (!max_chars || chars < max_chars)) {
        unsigned char c = *p;
        int e = 0;
        size_t len = 1;
        if (c >= 0x80) {
            len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
            for (size_t i = 1; i < len; i++)
                if ((p[i] & 0xc0) != 0x80)
                    len = 0;
            if (len)
                e = cli_buf_add(b, p, len);
            else
                e = cli_buf_addc(b, '?'), len = 1;
        } else if (c == '&') {
            e = cli_buf_add(b, "&amp;", 5);
        } else if (c == '<') {
            e = cli_buf_add(b, "&lt;", 4);
        } else if (c == '>') {
            e = cli_buf_add(b, "&gt;", 4);
        } else if (c == '"') {
            e = cli_buf_add(b, "&quot;", 6);
        } else if (c < 0x20 || c == 0x7f) {
            e = cli_buf_addc(b, ' ');
        } else {
            e = cli_buf_addc(b, (char)c);
        }
        if (e)
            *err = -ENOMEM;
        p += len;
        chars++;
    }
    return chars;
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* flamegraph.pl's warm palette, chosen by a hash of the name so that a
 * function keeps its colour across graphs. */
static void frame_color(const char *name, int rgb[3])
{
    uint64_t h = cli_hindex_hash_bytes(name, strlen(name), 7);
    double v1 = (double)(h & 0xffff) / 65535.0, v2 = (double)(h >> 16 & 0xffff) / 65535.0,
           v3 = (double)(h >> 32 & 0xffff) / 65535.0;
    rgb[0] = 205 + (int)(50 * v3);
    rgb[1] = (int)(230 * v1);
    rgb[2] = (int)(55 * v2);
}

struct svg_ctx {
    struct sgraph *g;
    struct cli_buf *b;
    double total;
    double px_per_unit;
    int height;
    int err;
};

static void emit_node(struct svg_ctx *c, size_t idx, double x_units, int depth)
{
    const struct snode *n = &c->g->nodes[idx];
    double w = n->value * c->px_per_unit;
    if (w < MIN_W || c->err)
        return;
    const char *name = idx ? c->g->strs.strs[n->name] : "all";
    const char *where = idx && n->where >= 0 ? c->g->strs.strs[n->where] : "";
    double x = SVG_PAD + x_units * c->px_per_unit;
    double y = c->height - FOOT_H - (depth + 1) * FRAME_H;
    int rgb[3];
    frame_color(name, rgb);
    struct cli_buf *b = c->b;
    int e = cli_buf_addf(b, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-v=\"%.0f\" data-n=\"",
                         c->total > 0 ? x_units / c->total : 0, c->total > 0 ? n->value / c->total : 1,
                         depth, n->value);
    put_xml(b, name, 0, &c->err);
    e |= cli_buf_add(b, "\" data-l=\"", 10);
    put_xml(b, where, 0, &c->err);
    e |= cli_buf_addf(b, "\"><title>");
    put_xml(b, name, 0, &c->err);
    if (*where) {
        e |= cli_buf_add(b, " (", 2);
        put_xml(b, where, 0, &c->err);
        e |= cli_buf_addc(b, ')');
    }
    e |= cli_buf_addf(b, "\n%.0f (%.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
                         "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
                      n->value, c->total > 0 ? 100.0 * n->value / c->total : 100.0, x, y,
                      w > 1 ? w - 1 : w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + 11.5);
    /* Cut the label to the frame, as the script does after a zoom. */
    size_t fit = (size_t)((w - 6) / CHAR_W);
    if (fit >= 3) {
        if (utf8_chars(name) <= fit) {
            put_xml(b, name, 0, &c->err);
        } else {
            put_xml(b, name, fit - 2, &c->err);
            e |= cli_buf_add(b, "..", 2);
        }
    }
    e |= cli_buf_add(b, "</text></g>\n", 12);
    if (e)
        c->err = -ENOMEM;
    double cx = x_units;
    /* Children in name order, so that the picture does not depend on the
     * order of the stacks (as flamegraph.pl sorts). */
    size_t nch = 0;
    for (size_t ch = n->first_child; ch; ch = c->g->nodes[ch].next_sibling)
        nch++;
    size_t *kids = calloc(nch ? nch : 1, sizeof(*kids));
    if (!kids) {
        c->err = -ENOMEM;
        return;
    }
    nch = 0;
    for (size_t ch = n->first_child; ch; ch = c->g->nodes[ch].next_sibling)
        kids[nch++] = ch;
    for (size_t i = 1; i < nch; i++) {
        size_t k = kids[i], j = i;
        while (j > 0 && strcmp(c->g->strs.strs[c->g->nodes[kids[j - 1]].name],
                               c->g->strs.strs[c->g->nodes[k].name]) > 0) {
            kids[j] = kids[j - 1];
            j--;
        }
        kids[j] = k;
    }
    for (size_t i = 0; i < nch; i++) {
        emit_node(c, kids[i], cx, depth + 1);
        cx += c->g->nodes[kids[i]].value;
    }
    free(kids);
}

static const char *value_title(enum cli_value v)
{
    switch (v) {
    case CLI_VALUE_LIVE_BYTES: return "live bytes";
    case CLI_VALUE_ALLOC_BYTES: return "allocated bytes";
    case CLI_VALUE_LIVE_OBJECTS: return "live objects";
    case CLI_VALUE_ALLOC_OBJECTS: return "allocated objects";
    }
    return "";
}

int cli_report_svg(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out)
{
    struct sgraph g = { 0 };
    struct cli_map *maps = NULL;
    size_t nmaps = 0;
    struct cli_buf b = { 0 };
    enum cli_value v;
    int err;

    if (cli_value_parse(opt ? opt->value : NULL, &v))
        return -EINVAL;
    if ((err = cli_maps_parse(p->maps, p->maps_len, &maps, &nmaps)))
        return err;
    err = -ENOMEM;
    g.cap = 1024;
    g.n = 1;
    g.nodes = calloc(g.cap, sizeof(*g.nodes));
    if (!g.nodes)
        goto out;
    g.nodes[0].where = -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        double val = cli_value_of_stack(&p->stacks[i], v);
        if (val > 0 && add_stack(&g, &p->stacks[i], val, maps, nmaps))
            goto out;
    }

    double total = g.nodes[0].value;
    int height = HEAD_H + (g.max_depth + 1) * FRAME_H + FOOT_H;
    struct svg_ctx c = { &g, &b, total, total > 0 ? (SVG_WIDTH - 2 * SVG_PAD) / total : 0, height, 0 };
    if (cli_buf_addf(&b,
                     "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                     "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
                     "data-unit=\"%s\" data-total=\"%.0f\">\n"
                     "<style>text{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:%dpx;fill:#000}"
                     "g.f text{pointer-events:none}g.f:hover rect{stroke:#000;stroke-width:0.6}"
                     "#title{font-size:17px;text-anchor:middle}#sub{fill:#555;text-anchor:middle}"
                     ".btn{cursor:pointer;fill:#036}#details{fill:#000}"
                     "</style>\n"
                     "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
                     "<text id=\"title\" x=\"%d\" y=\"24\">Flame graph: %s</text>\n<text id=\"sub\" x=\"%d\" y=\"42\">",
                     SVG_WIDTH, height, SVG_WIDTH, height, cli_value_name(v), total, FONT_PX,
                     SVG_WIDTH / 2, value_title(v), SVG_WIDTH / 2))
        goto out;
    char totalbuf[32], ratebuf[32];
    if (v == CLI_VALUE_LIVE_BYTES || v == CLI_VALUE_ALLOC_BYTES)
        cli_fmt_bytes(total, totalbuf, sizeof(totalbuf));
    else
        cli_fmt_count(total, totalbuf, sizeof(totalbuf));
    cli_fmt_bytes((double)p->rate, ratebuf, sizeof(ratebuf));
    if (cli_buf_addf(&b, "heapinject, pid %d, %.1f s, 1 sample per %s: %s %s in all</text>\n",
                     p->pid, p->duration_s, ratebuf, totalbuf, value_title(v)) ||
        cli_buf_addf(&b,
                     "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"24\" visibility=\"hidden\">Reset zoom</text>\n"
                     "<foreignObject x=\"%d\" y=\"6\" width=\"260\" height=\"26\">"
                     "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
                     "placeholder=\"search (regex)\" style=\"width:240px;font:12px sans-serif\"/>"
                     "</foreignObject>\n"
                     "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n"
                     "<text id=\"details\" x=\"%d\" y=\"%d\">Point at a frame for details; click to zoom, "
                     "Esc to zoom out; Ctrl-F to search.</text>\n<g id=\"frames\">\n",
                     SVG_PAD, SVG_WIDTH - SVG_PAD - 260, SVG_WIDTH - SVG_PAD, height - 10, SVG_PAD,
                     height - 10))
        goto out;
    if (total > 0)
        emit_node(&c, 0, 0, 0);
    else if (cli_buf_addf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no %s in this profile</text>\n",
                          SVG_WIDTH / 2, HEAD_H + 20, value_title(v)))
        goto out;
    if (c.err)
        goto out;
    if (cli_buf_addf(&b, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
                     cli_svg_script))
        goto out;
    err = cli_buf_write_all(out, b.data, b.len);
out:
    free(b.data);
    free(g.nodes);
    cli_strtab_free(&g.strs);
    free(maps);
    return err;
}
