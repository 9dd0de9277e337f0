/* massif.c - massif.out, as valgrind's massif writes it, for ms_print
 * and massif-visualizer (FORMATS.md).
 *
 * Snapshots are the session's ticks (heap_tree=empty, mem_heap_B = the
 * estimated live bytes then), thinned to at most MAX_SNAPSHOTS like massif's
 * own --max-snapshots, plus a last, detailed snapshot built from the stacks
 * at snapshot time. Per-stack bytes exist only for that moment, so:
 *   - if the last snapshot is the largest, it is the one marked "peak";
 *   - otherwise the largest tick is marked "peak" with its total only (a top
 *     node without children: no breakdown was recorded then), and the last
 *     snapshot is "detailed".
 * The tree is massif's: the top node "(heap allocation functions)", under it
 * the functions that called the allocator, under each its callers, children
 * sorted by bytes; children below 1% of the total are folded into one
 * "in N places" line, as massif does at its default --threshold=1.0.
 * Stacks of direct mmap (kind mmap) are left out: massif's heap is the
 * malloc family's, and so are the ticks the timeline is made of.
 */
#include "cli/report/massif.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SNAPSHOTS 100
#define THRESHOLD_PCT 1.0

struct mnode {
    uint64_t addr;
    const struct cli_frame *frame; /* NULL: unsymbolized PC */
    uint64_t bytes;
    size_t first_child, next_sibling; /* indexes into the pool, 0 = none */
};

struct mtree {
    struct mnode *nodes; /* nodes[0] is the top node */
    size_t n, cap;
    const struct cli_map *maps;
    size_t nmaps;
};

static long tree_child(struct mtree *t, size_t parent, uint64_t addr, const struct cli_frame *frame)
{
    for (size_t c = t->nodes[parent].first_child; c; c = t->nodes[c].next_sibling)
        if (t->nodes[c].addr == addr && t->nodes[c].frame == frame)
            return (long)c;
    /* Frames of different stacks are different objects even when they say
     * the same thing; compare what they say. */
    for (size_t c = t->nodes[parent].first_child; frame && c; c = t->nodes[c].next_sibling) {
        const struct cli_frame *o = t->nodes[c].frame;
        if (o && t->nodes[c].addr == addr && o->line == frame->line &&
            !strcmp(o->function ? o->function : "", frame->function ? frame->function : "") &&
            !strcmp(o->file ? o->file : "", frame->file ? frame->file : ""))
            return (long)c;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap * 2;
        struct mnode *nn = realloc(t->nodes, nc * sizeof(*nn));
        if (!nn)
            return -ENOMEM;
        t->nodes = nn;
        t->cap = nc;
    }
    size_t c = t->n++;
    t->nodes[c] = (struct mnode){ addr, frame, 0, 0, t->nodes[parent].first_child };
    t->nodes[parent].first_child = c;
    return (long)c;
}

static int tree_add_stack(struct mtree *t, const struct cli_stack *s, uint64_t bytes)
{
    struct cli_stack_loc *locs;
    size_t nlocs, cur = 0;
    if (cli_stack_locs(s, t->maps, t->nmaps, &locs, &nlocs))
        return -ENOMEM;
    t->nodes[0].bytes += bytes;
    /* Massif's tree starts at the allocation site: innermost frame first. */
    for (size_t k = 0; k < nlocs; k++) {
        uint32_t nf = locs[k].frames ? locs[k].nframes : 1;
        for (uint32_t f = 0; f < nf; f++) {
            long c = tree_child(t, cur, locs[k].addr, locs[k].frames ? &locs[k].frames[f] : NULL);
            if (c < 0) {
                free(locs);
                return -ENOMEM;
            }
            cur = (size_t)c;
            t->nodes[cur].bytes += bytes;
        }
    }
    free(locs);
    return 0;
}

static int cmp_bytes_desc(const void *a, const void *b)
{
    const struct mnode *x = *(const struct mnode *const *)a, *y = *(const struct mnode *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* Writes a name with '#' (ms_print drops the rest of a line after it) and
 * line breaks replaced. */
static int put_clean(FILE *out, const char *s)
{
    for (; *s; s++) {
        char c = *s == '#' ? '_' : ((unsigned char)*s < 0x20 ? ' ' : *s);
        if (fputc(c, out) == EOF)
            return -EIO;
    }
    return 0;
}

static int write_label(struct mtree *t, const struct mnode *n, FILE *out)
{
    if (fprintf(out, " 0x%" PRIX64 ": ", n->addr) < 0)
        return -EIO;
    if (n->frame) {
        const struct cli_frame *f = n->frame;
        if (put_clean(out, f->function ? f->function : "???"))
            return -EIO;
        if (f->file) {
            if (fputs(" (", out) == EOF || put_clean(out, f->file) ||
                fprintf(out, ":%d)", f->line) < 0)
                return -EIO;
        } else if (f->module) {
            if (fputs(" (in ", out) == EOF || put_clean(out, f->module) || fputc(')', out) == EOF)
                return -EIO;
        }
    } else {
        const struct cli_map *m = cli_maps_find(t->maps, t->nmaps, n->addr);
        if (fputs("??? ", out) == EOF)
            return -EIO;
        if (m && m->pathlen && fprintf(out, "(in %.*s)", (int)m->pathlen, m->path) < 0)
            return -EIO;
    }
    return fputc('\n', out) == EOF ? -EIO : 0;
}

static int write_node(struct mtree *t, size_t idx, int depth, uint64_t total, FILE *out)
{
    const struct mnode *n = &t->nodes[idx];
    size_t nch = 0;
    for (size_t c = n->first_child; c; c = t->nodes[c].next_sibling)
        nch++;
    const struct mnode **ch = calloc(nch ? nch : 1, sizeof(*ch));
    if (!ch)
        return -ENOMEM;
    nch = 0;
    for (size_t c = n->first_child; c; c = t->nodes[c].next_sibling)
        ch[nch++] = &t->nodes[c];
    qsort(ch, nch, sizeof(*ch), cmp_bytes_desc);

    size_t nsig = 0;
    uint64_t insig_bytes = 0;
    for (size_t i = 0; i < nch; i++) {
        if (total && (double)ch[i]->bytes * 100.0 / (double)total >= THRESHOLD_PCT)
            nsig++;
        else
            insig_bytes += ch[i]->bytes;
    }
    size_t nlines = nsig + (nsig < nch ? 1 : 0);
    int err = -EIO;
    if (fprintf(out, "%*sn%zu: %" PRIu64, depth, "", nlines, n->bytes) < 0)
        goto out;
    if (idx == 0) {
        if (fputs(" (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n", out) == EOF)
            goto out;
    } else if ((err = write_label(t, n, out))) {
        goto out;
    }
    for (size_t i = 0; i < nsig; i++)
        if ((err = write_node(t, (size_t)(ch[i] - t->nodes), depth + 1, total, out)))
            goto out;
    err = -EIO;
    if (nsig < nch &&
        fprintf(out, "%*sn0: %" PRIu64 " in %zu place%s, all below massif's threshold (%.2f%%)\n",
                depth + 1, "", insig_bytes, nch - nsig, nch - nsig == 1 ? "" : "s", THRESHOLD_PCT) < 0)
        goto out;
    err = 0;
out:
    free(ch);
    return err;
}

static int write_snapshot_head(FILE *out, size_t num, long long time_ms, uint64_t heap,
                               const char *tree)
{
    return fprintf(out,
                   "#-----------\nsnapshot=%zu\n#-----------\ntime=%lld\nmem_heap_B=%" PRIu64
                   "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
                   num, time_ms, heap, tree) < 0 ? -EIO : 0;
}

int cli_report_massif(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out)
{
    struct mtree t = { 0 };
    struct cli_map *maps = NULL;
    size_t nmaps = 0, *pick = NULL, npick = 0;
    int err;

    if ((err = cli_maps_parse(p->maps, p->maps_len, &maps, &nmaps)))
        return err;
    err = -ENOMEM;
    t.maps = maps;
    t.nmaps = nmaps;
    t.cap = 256;
    t.n = 1;
    t.nodes = calloc(t.cap, sizeof(*t.nodes));
    pick = calloc(MAX_SNAPSHOTS + 1, sizeof(*pick));
    if (!t.nodes || !pick)
        goto out;
    for (size_t i = 0; i < p->nstacks; i++) {
        double b = p->stacks[i].live_bytes;
        if (p->stacks[i].kind != HI_KIND_MALLOC)
            continue; /* the ticks' timeline is the malloc family's: direct mmap stays out */
        if (b >= 0.5 && tree_add_stack(&t, &p->stacks[i], (uint64_t)llround(b)))
            goto out;
    }
    uint64_t final_heap = t.nodes[0].bytes;

    /* Ticks, thinned by a fixed stride; the largest tick always stays. */
    size_t max_tick = 0;
    for (size_t i = 1; i < p->nticks; i++)
        if (p->ticks[i].live_bytes > p->ticks[max_tick].live_bytes)
            max_tick = i;
    size_t stride = p->nticks / MAX_SNAPSHOTS + 1;
    for (size_t i = 0; i < p->nticks; i++)
        if ((i % stride == 0 || i == max_tick) && npick < MAX_SNAPSHOTS)
            pick[npick++] = i;
    if (p->nticks && npick == MAX_SNAPSHOTS && pick[npick - 1] < max_tick)
        pick[npick - 1] = max_tick;

    bool final_is_peak = !p->nticks || final_heap >= p->ticks[max_tick].live_bytes;
    long long last_ms = 0;
    err = -EIO;
    if (fputs("desc: heapinject sampling heap profile", out) == EOF ||
        fprintf(out, " (rate %" PRIu64 " bytes, live bytes are estimates)\ncmd: ", p->rate) < 0)
        goto out;
    if (opt && opt->command) {
        if (put_clean(out, opt->command))
            goto out;
    } else if (fprintf(out, "pid %d", p->pid) < 0) {
        goto out;
    }
    if (fputs("\ntime_unit: ms\n", out) == EOF)
        goto out;
    for (size_t k = 0; k < npick; k++) {
        const struct cli_tick *tk = &p->ticks[pick[k]];
        long long ms = llround(fmax(tk->t_s, 0) * 1000);
        if (ms < last_ms)
            ms = last_ms;
        last_ms = ms;
        bool peak = !final_is_peak && pick[k] == max_tick;
        if ((err = write_snapshot_head(out, k, ms, tk->live_bytes, peak ? "peak" : "empty")))
            goto out;
        if (peak && fprintf(out, "n0: %" PRIu64 " (heap allocation functions) malloc/new/new[], "
                                 "--alloc-fns, etc.\n", tk->live_bytes) < 0) {
            err = -EIO;
            goto out;
        }
    }
    long long end_ms = llround(fmax(p->duration_s, 0) * 1000);
    if ((err = write_snapshot_head(out, npick, end_ms > last_ms ? end_ms : last_ms, final_heap,
                                   final_is_peak ? "peak" : "detailed")) ||
        (err = write_node(&t, 0, 0, final_heap, out)))
        goto out;
    err = 0;
out:
    free(pick);
    free(t.nodes);
    free(maps);
    return err;
}
