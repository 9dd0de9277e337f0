/* diff.c - cur minus base, stack by stack (see cli/profile/diff.h). */
#include "cli/profile/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/process/paths.h"
#include "cli/profile/merge.h"
#include "cli/profile/stack_locs.h"
#include "cli/util/buf.h"
#include "cli/util/strtab.h"

struct side {
    const struct cli_profile *p;
    struct cli_map *maps;
    size_t nmaps;
};

struct sum {
    double v[4];          /* live_bytes, live_objects, alloc_bytes, alloc_objects */
    uint64_t raw[4];
    long first_cur;       /* index of the first cur stack with this key, -1 */
};

static bool symbolized(const struct cli_profile *p)
{
    for (size_t i = 0; i < p->nstacks; i++)
        for (uint32_t k = 0; k < p->stacks[i].nframes; k++)
            if (p->stacks[i].frames[k].function)
                return true;
    return false;
}

static const char *base_name(const char *path)
{
    return path ? cli_paths_basename(path) : "";
}

/* The key of a stack: a byte string that is equal for the same call path. */
static int stack_key(const struct side *sd, const struct cli_stack *s, bool by_name, bool by_pid, struct cli_buf *b)
{
    b->len = 0;
    /* Profiles of several processes: a stack of one process is never
     * matched with another's (issue 28). */
    if (by_pid && cli_buf_addf(b, "%d\x1d", (int)cli_stack_pid(sd->p, s)))
        return -ENOMEM;
    if (s->kind != HI_KIND_MALLOC && cli_buf_addf(b, "%s\x1d", cli_profile_kind_name(s->kind)))
        return -ENOMEM; /* a mapping and a malloc from one call path differ */
    if (by_name && s->nframes) {
        for (uint32_t i = 0; i < s->nframes; i++) {
            const struct cli_frame *f = &s->frames[i];
            int e;
            if (f->function)
                e = cli_buf_addf(b, "%s\x1f%s\x1e", f->function, base_name(f->module));
            else if (f->module)
                e = cli_buf_addf(b, "+0x%" PRIx64 "\x1f%s\x1e", f->module_offset, base_name(f->module));
            else
                e = cli_buf_addf(b, "0x%" PRIx64 "\x1e", f->addr);
            if (e)
                return -ENOMEM;
        }
        return cli_buf_add(b, "", 0);
    }
    struct cli_stack_loc *locs;
    size_t n;
    if (cli_stack_locs(s, sd->maps, sd->nmaps, &locs, &n))
        return -ENOMEM;
    int e = cli_buf_add(b, "@", 1);
    for (size_t i = 0; !e && i < n; i++)
        e = cli_buf_addf(b, "%" PRIx64 " ", locs[i].addr);
    free(locs);
    return e ? -ENOMEM : 0;
}

static void stack_vals(const struct cli_stack *s, double v[4], uint64_t raw[4])
{
    v[0] = s->live_bytes, v[1] = s->live_objects, v[2] = s->alloc_bytes, v[3] = s->alloc_objects;
    raw[0] = s->raw_live_bytes, raw[1] = s->raw_live_objects;
    raw[2] = s->raw_alloc_bytes, raw[3] = s->raw_alloc_objects;
}

static char *dup_opt(const char *s, int *err)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *err = -ENOMEM;
    return d;
}

/* Deep copy of a stack's PCs and frames (values are set by the caller). */
static int copy_stack(struct cli_stack *dst, const struct cli_stack *src)
{
    int err = 0;
    memset(dst, 0, sizeof(*dst));
    dst->pcs = calloc(src->npcs ? src->npcs : 1, sizeof(*dst->pcs));
    dst->frames = calloc(src->nframes ? src->nframes : 1, sizeof(*dst->frames));
    if (!dst->pcs || !dst->frames)
        return -ENOMEM;
    if (src->npcs)
        memcpy(dst->pcs, src->pcs, src->npcs * sizeof(*dst->pcs));
    dst->npcs = src->npcs;
    for (uint32_t i = 0; i < src->nframes; i++) {
        struct cli_frame *f = &dst->frames[dst->nframes++];
        *f = src->frames[i];
        f->function = dup_opt(src->frames[i].function, &err);
        f->module = dup_opt(src->frames[i].module, &err);
        f->file = dup_opt(src->frames[i].file, &err);
    }
    if (!dst->nframes) {
        free(dst->frames);
        dst->frames = NULL;
    }
    dst->oldest_live_ns = src->oldest_live_ns;
    dst->live_age_sum_ms = src->live_age_sum_ms;
    dst->first_tid = src->first_tid;
    dst->kind = src->kind;
    dst->pid = src->pid;
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        dst->growth[g] = -1;
    return err;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static void diff_totals(struct hi_totals *o, const struct hi_totals *c, const struct hi_totals *b)
{
    const uint64_t *cv = (const uint64_t *)c, *bv = (const uint64_t *)b;
    uint64_t *ov = (uint64_t *)o;
    /* hi_totals is a packed run of uint64_t counters. */
    for (size_t i = 0; i < sizeof(*o) / sizeof(uint64_t); i++) {
        uint64_t x, y;
        memcpy(&x, cv + i, sizeof(x));
        memcpy(&y, bv + i, sizeof(y));
        x = sub0(x, y);
        memcpy(ov + i, &x, sizeof(x));
    }
}

int cli_profile_diff(const struct cli_profile *base, const struct cli_profile *cur,
                     struct cli_profile *out)
{
    struct side sb = { base, NULL, 0 }, sc = { cur, NULL, 0 };
    struct cli_strtab keys = { 0 };
    struct sum *sums = NULL;
    size_t nsums = 0, capsums = 0;
    struct cli_buf key = { 0 };
    bool by_name = symbolized(base) && symbolized(cur);
    bool by_pid = base->nprocesses > 1 && cur->nprocesses > 1;
    int err = -ENOMEM;

    memset(out, 0, sizeof(*out));
    if (cli_maps_parse(base->maps, base->maps_len, &sb.maps, &sb.nmaps) ||
        cli_maps_parse(cur->maps, cur->maps_len, &sc.maps, &sc.nmaps))
        goto out;

    /* Sum both sides by key: base first (side 0), then cur (side 1). */
    struct sum *cur_sums = NULL;
    for (int side = 0; side < 2; side++) {
        const struct side *sd = side ? &sc : &sb;
        for (size_t i = 0; i < sd->p->nstacks; i++) {
            const struct cli_stack *s = &sd->p->stacks[i];
            if (stack_key(sd, s, by_name, by_pid, &key))
                goto out;
            long k = cli_strtab_intern_len(&keys, key.data, key.len);
            if (k < 0)
                goto out;
            while ((size_t)k >= capsums) {
                size_t nc = capsums ? capsums * 2 : 256;
                struct sum *ns = realloc(sums, 2 * nc * sizeof(*ns));
                if (!ns)
                    goto out;
                /* Two arrays in one block: [0, nc) base, [nc, 2nc) cur. */
                memmove(ns + nc, ns + capsums, capsums * sizeof(*ns));
                memset(ns + capsums, 0, (nc - capsums) * sizeof(*ns));
                memset(ns + nc + capsums, 0, (nc - capsums) * sizeof(*ns));
                for (size_t j = capsums; j < nc; j++)
                    ns[nc + j].first_cur = -1;
                sums = ns;
                capsums = nc;
            }
            if ((size_t)k >= nsums)
                nsums = (size_t)k + 1;
            struct sum *sm = &sums[(side ? capsums : 0) + (size_t)k];
            double v[4];
            uint64_t raw[4];
            stack_vals(s, v, raw);
            for (int j = 0; j < 4; j++) {
                sm->v[j] += v[j];
                sm->raw[j] += raw[j];
            }
            if (side && sm->first_cur < 0)
                sm->first_cur = (long)i;
        }
    }
    cur_sums = sums ? sums + capsums : NULL;

    out->stacks = calloc(nsums ? nsums : 1, sizeof(*out->stacks));
    if (!out->stacks)
        goto out;
    for (size_t k = 0; k < nsums; k++) {
        const struct sum *c = &cur_sums[k], *b = &sums[k];
        if (c->first_cur < 0)
            continue;
        double d[4];
        for (int j = 0; j < 4; j++)
            d[j] = c->v[j] > b->v[j] ? c->v[j] - b->v[j] : 0;
        if (!(d[0] > 0) && !(d[2] > 0))
            continue;
        struct cli_stack *s = &out->stacks[out->nstacks++];
        if (copy_stack(s, &cur->stacks[c->first_cur]))
            goto out;
        s->live_bytes = d[0], s->live_objects = d[1], s->alloc_bytes = d[2], s->alloc_objects = d[3];
        s->raw_live_bytes = sub0(c->raw[0], b->raw[0]);
        s->raw_live_objects = sub0(c->raw[1], b->raw[1]);
        s->raw_alloc_bytes = sub0(c->raw[2], b->raw[2]);
        s->raw_alloc_objects = sub0(c->raw[3], b->raw[3]);
    }

    out->pid = cur->pid;
    out->rate = cur->rate;
    out->duration_s = cur->duration_s;
    out->attach_ns = cur->attach_ns;
    out->snapshot_ns = cur->snapshot_ns;
    out->rss_bytes = cur->rss_bytes;
    out->tick_ms = cur->tick_ms;
    diff_totals(&out->totals, &cur->totals, &base->totals);
    out->totals.buckets = out->nstacks;
    for (unsigned i = 0; i < HI_HIST_CLASSES; i++) {
        out->hist.calls[i] = sub0(cur->hist.calls[i], base->hist.calls[i]);
        out->hist.bytes[i] = sub0(cur->hist.bytes[i], base->hist.bytes[i]);
    }
    if (cur->maps) {
        if (!(out->maps = malloc(cur->maps_len + 1)))
            goto out;
        memcpy(out->maps, cur->maps, cur->maps_len);
        out->maps[cur->maps_len] = '\0';
        out->maps_len = cur->maps_len;
    }
    if (cli_profile_copy_processes(out, cur) < 0)
        goto out;
    bool same_session = base->pid == cur->pid && base->attach_ns && base->attach_ns == cur->attach_ns;
    out->ticks = calloc(cur->nticks ? cur->nticks : 1, sizeof(*out->ticks));
    if (!out->ticks)
        goto out;
    for (size_t i = 0; i < cur->nticks; i++)
        if (!same_session || cur->ticks[i].t_s > base->duration_s)
            out->ticks[out->nticks++] = cur->ticks[i];
    cli_profile_sort(out);
    err = 0;
out:
    if (err)
        cli_profile_free(out);
    free(sums);
    free(key.data);
    cli_strtab_free(&keys);
    free(sb.maps);
    free(sc.maps);
    return err;
}
