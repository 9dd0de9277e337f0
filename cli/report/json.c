/* json.c - the profile as one JSON document (docs/JSON.md). Stable keys,
 * stacks by live bytes descending, frames innermost first, heapinject's
 * own frames left out. Schema version 2 (issue 17): each distinct frame
 * once in a top-level "frames" table and stacks as arrays of indices into
 * it; 100,000 stacks of 37 frames took 925 MB written inline (version 1). */
#include "cli/census/census.h"
#include "cli/memory/report.h"
#include "cli/profile/merge.h"
#include "cli/profile/tick_top.h"
#include "cli/report/processes.h"
#include "cli/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/hindex.h"
#include "cli/profile/leaks.h"
#include "cli/report/formats.h"
#include "cli/symbolize/debughint.h"

#define JSON_SCHEMA_VERSION 2

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        len = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* Writes s as a JSON string (null for NULL). Bytes that are not UTF-8 (a
 * path can hold any) are written as the Latin-1 character of that byte so
 * the document stays valid. */
void cli_json_write_str_len(FILE *out, const char *s, size_t n)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            i++;
        } else if (c == '\n') {
            fputs("\\n", out), i++;
        } else if (c == '\t') {
            fputs("\\t", out), i++;
        } else if (c < 0x20 || c == 0x7f) { /* NUL included: n bounds the string */
            fprintf(out, "\\u%04x", c), i++;
        } else if (c < 0x80) {
            fputc(c, out), i++;
        } else {
            size_t l = utf8_len(p + i, n - i);
            if (l) {
                fwrite(p + i, 1, l, out);
                i += l;
            } else {
                fprintf(out, "\\u%04x", c), i++;
            }
        }
    }
    fputc('"', out);
}

void cli_json_write_str(FILE *out, const char *s)
{
    cli_json_write_str_len(out, s, s ? strlen(s) : 0);
}

/* Estimates are doubles; JSON consumers want integers for bytes and counts. */
static void json_num(FILE *out, double v)
{
    if (!isfinite(v) || v < 0)
        v = 0;
    fprintf(out, "%.0f", v);
}

static void write_totals(FILE *out, const struct hi_totals *t)
{
    fprintf(out,
            "  \"totals\": {\"alloc_bytes\": %" PRIu64 ", \"alloc_objects\": %" PRIu64
            ", \"free_bytes\": %" PRIu64 ", \"free_objects\": %" PRIu64 ", \"live_bytes\": %" PRIu64
            ", \"live_objects\": %" PRIu64 ",\n             \"exact_alloc_bytes\": %" PRIu64
            ", \"exact_alloc_calls\": %" PRIu64 ", \"exact_free_bytes\": %" PRIu64
            ", \"exact_free_calls\": %" PRIu64 ", \"exact_bytes\": \"usable\""
            ",\n             \"samples\": %" PRIu64
            ", \"dropped_samples\": %" PRIu64 ", \"stacks\": %" PRIu64 ", \"profiler_bytes\": %" PRIu64 "},\n",
            t->est_alloc_bytes, t->est_alloc_objects, t->est_free_bytes, t->est_free_objects, t->est_live_bytes,
            t->est_live_objects, t->exact_alloc_bytes, t->exact_alloc_calls, t->exact_free_bytes,
            t->exact_free_calls, t->raw_samples, t->dropped_samples, t->buckets, t->payload_mem_bytes);
}

/* "mmap": the direct mmap family (issue 14). Estimates are the sums of
 * the stacks of kind "mmap"; the exact counts come from the agent (absent
 * from profiles of older agents). */
static void write_mmap(FILE *out, const struct cli_profile *p)
{
    struct cli_profile_kind_sums k;
    cli_profile_kind_sum(p, HI_KIND_MMAP, &k);
    fputs("  \"mmap\": {\"live_bytes\": ", out);
    json_num(out, k.live_bytes);
    fputs(", \"live_objects\": ", out);
    json_num(out, k.live_objects);
    fputs(", \"alloc_bytes\": ", out);
    json_num(out, k.alloc_bytes);
    fputs(", \"alloc_objects\": ", out);
    json_num(out, k.alloc_objects);
    fprintf(out, ", \"stacks\": %zu", k.nstacks);
    if (p->have_mmap) {
        const struct hi_snap_mmap *m = &p->mmap;
        fprintf(out,
                ",\n           \"map_calls\": %" PRIu64 ", \"map_bytes\": %" PRIu64 ", \"unmap_calls\": %" PRIu64
                ", \"remap_calls\": %" PRIu64 ", \"tracked\": %" PRIu64 ", \"dropped_samples\": %" PRIu64,
                m->map_calls, m->map_bytes, m->unmap_calls, m->remap_calls, m->tracked, m->dropped);
    }
    fputs("},\n", out);
}

/* "pymalloc": CPython's objects (issue 29 item 2), the sums of the stacks
 * of kind "pymalloc", and whether the allocator was sampled ("sampled",
 * "status", "why"); absent when the process is not Python. The bytes are
 * inside pymalloc's arenas, which are stacks of kind "mmap": "inside"
 * says so, and the two are not to be added. */
static void write_pymalloc(FILE *out, const struct cli_profile *p)
{
    struct cli_profile_kind_sums k;
    cli_profile_kind_sum(p, HI_KIND_PYMALLOC, &k);
    if (!p->have_pymalloc && !k.nstacks)
        return;
    fputs("  \"pymalloc\": {\"live_bytes\": ", out);
    json_num(out, k.live_bytes);
    fputs(", \"live_objects\": ", out);
    json_num(out, k.live_objects);
    fputs(", \"alloc_bytes\": ", out);
    json_num(out, k.alloc_bytes);
    fputs(", \"alloc_objects\": ", out);
    json_num(out, k.alloc_objects);
    fprintf(out, ", \"stacks\": %zu, \"inside\": \"mmap\"", k.nstacks);
    if (p->have_pymalloc) {
        fprintf(out, ",\n               \"sampled\": %s, \"status\": %d, \"python_minor\": %u, \"why\": ",
                p->pymalloc.status > 0 ? "true" : "false", p->pymalloc.status, p->pymalloc.minor);
        cli_json_write_str(out, p->pymalloc.why);
    }
    fputs("},\n", out);
}

/* "stack_walks": stacks captured this session and how many of them ended
 * at a frame the walk could not step (their outer callers are missing). */
static void write_walks(FILE *out, const struct cli_profile *p)
{
    if (p->have_walks)
        fprintf(out,
                "  \"stack_walks\": {\"walks\": %" PRIu64 ", \"truncated\": %" PRIu64 ", \"budget_bytes\": %" PRIu64
                ", \"budget_dropped\": %" PRIu64 "},\n",
                p->walks.walks, p->walks.truncated, p->walks.budget_bytes, p->walks.budget_dropped);
}

/* "python": the target's Python frames, how many samples carry them and
 * why the others do not (docs/JSON.md). Absent when not a Python process. */
static void write_python(FILE *out, const struct cli_profile *p)
{
    const struct hi_snap_python *st = &p->python.st;
    if (!p->python.have || st->state == HI_PYTHON_NONE)
        return;
    fprintf(out, "  \"python\": {\"frames\": %s, \"version\": ", st->state == HI_PYTHON_READ ? "true" : "false");
    if (st->minor)
        fprintf(out, "\"3.%u\"", st->minor);
    else
        fputs("null", out);
    fputs(", \"why_not\": ", out);
    cli_json_write_str(out, st->state == HI_PYTHON_READ ? NULL : st->why);
    fprintf(out,
            ", \"samples_with_frames\": %" PRIu64 ", \"samples_no_python_state\": %" PRIu64
            ", \"samples_chain_dropped\": %" PRIu64 ", \"samples_no_eval_frame\": %" PRIu64
            ", \"unnamed_frames\": %" PRIu64 ", \"codes\": %" PRIu64 ", \"samples_cut\": %" PRIu64
            ", \"samples_subinterpreter\": %" PRIu64 "},\n",
            st->with_frames, st->no_state, st->not_valid, st->unplaced, st->unnamed, st->codes, st->cut,
            st->subinterp);
}

/* The maps of the profile, for the "mapping" of frames in memory that is
 * no file ([jit], [anon], [vdso]): their module names no file to look in. */
struct json_maps {
    struct cli_map *maps;
    size_t n;
};

static void write_frame(FILE *out, const struct cli_frame *f, const struct json_maps *jm)
{
    fprintf(out, "{\"addr\": \"0x%" PRIx64 "\", \"function\": ", f->addr);
    cli_json_write_str(out, f->function);
    const char *runtime = cli_frame_runtime_name(f->runtime);
    if (runtime) /* a frame of Python code: function is its qualname (docs/JSON.md) */
        fprintf(out, ", \"runtime\": \"%s\"", runtime);
    fputs(", \"module\": ", out);
    cli_json_write_str(out, f->module);
    const struct cli_map *m = f->module && f->module[0] == '[' && jm->maps
                                  ? cli_maps_find(jm->maps, jm->n, f->addr - f->module_offset)
                                  : NULL;
    if (m)
        fprintf(out, ", \"mapping\": \"%" PRIx64 "-%" PRIx64 " %.4s\"", m->start, m->end, m->perms);
    fprintf(out, ", \"module_offset\": \"0x%" PRIx64 "\", \"file\": ", f->module_offset);
    cli_json_write_str(out, f->file);
    fprintf(out, ", \"line\": %d, \"inlined\": %s}", f->line, f->inlined ? "true" : "false");
}

/* The frame table: each distinct frame once, and each stack's frames as
 * indices into it (ids[first[i]] ...). Frames of one PC are the same in
 * every stack through it; the hash takes their numbers only and same()
 * compares the strings (pointers first: the symbolizer interns them). */
struct json_ftab {
    struct cli_frame *frames;  /* copies; strings are the profile's */
    size_t n, cap;
    struct cli_hindex index;
    uint32_t *ids;             /* all stacks' frame indices, stack after stack */
    size_t *first;             /* per stack: its first index in ids */
};

/* Once per frame (millions): a multiply-xorshift mix of its numbers, not
 * cli_hindex_hash_bytes' byte loop (10% of the writer's time). */
static uint64_t frame_hash(const struct cli_frame *f)
{
    uint64_t h = f->addr * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 31) ^ f->module_offset) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 29) ^ ((uint64_t)(uint32_t)f->line << 1 | f->inlined)) * 0x94d049bb133111ebull;
    return h ^ (h >> 32);
}

static bool str_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

struct frame_probe {
    const struct json_ftab *t;
    const struct cli_frame *f;
};

static bool frame_same(size_t entry, const void *ctx)
{
    const struct frame_probe *p = ctx;
    const struct cli_frame *a = &p->t->frames[entry], *b = p->f;
    return a->addr == b->addr && a->module_offset == b->module_offset && a->line == b->line &&
           a->inlined == b->inlined && a->runtime == b->runtime && str_same(a->function, b->function) &&
           str_same(a->module, b->module) &&
           str_same(a->file, b->file);
}

/* The table index of f (added when new); -ENOMEM. */
static long ftab_id(struct json_ftab *t, const struct cli_frame *f)
{
    uint64_t h = frame_hash(f);
    struct frame_probe pr = { t, f };
    long id = cli_hindex_find(&t->index, h, frame_same, &pr);
    if (id >= 0)
        return id;
    if (t->n >= UINT32_MAX)
        return -ENOMEM;
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 1024;
        struct cli_frame *nf = realloc(t->frames, nc * sizeof(*nf));
        if (!nf)
            return -ENOMEM;
        t->frames = nf;
        t->cap = nc;
    }
    if (cli_hindex_add(&t->index, h, t->n) < 0)
        return -ENOMEM;
    t->frames[t->n] = *f;
    return (long)t->n++;
}

static size_t stack_frame_count(const struct cli_stack *s)
{
    return s->nframes ? s->nframes : s->npcs; /* unsymbolized: a frame per PC */
}

static int ftab_build(struct json_ftab *t, const struct cli_profile *p)
{
    size_t total = 0;
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < p->nstacks; i++)
        total += stack_frame_count(&p->stacks[i]);
    t->ids = malloc((total ? total : 1) * sizeof(*t->ids));
    t->first = malloc((p->nstacks + 1) * sizeof(*t->first));
    if (!t->ids || !t->first)
        return -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        t->first[i] = k;
        for (uint32_t j = 0; j < stack_frame_count(s); j++) {
            /* Unsymbolized: the addresses alone. */
            struct cli_frame bare = { .addr = s->nframes ? 0 : s->pcs[j] };
            long id = ftab_id(t, s->nframes ? &s->frames[j] : &bare);
            if (id < 0)
                return (int)id;
            t->ids[k++] = (uint32_t)id;
        }
    }
    t->first[p->nstacks] = k;
    return 0;
}

static void ftab_free(struct json_ftab *t)
{
    free(t->frames);
    free(t->ids);
    free(t->first);
    cli_hindex_free(&t->index);
}

static void write_frame_table(FILE *out, const struct json_ftab *t, const struct json_maps *jm)
{
    fputs("  \"frames\": [", out);
    for (size_t i = 0; i < t->n; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        write_frame(out, &t->frames[i], jm);
    }
    fputs(t->n ? "\n  ],\n" : "],\n", out);
}

/* Are the stack's PCs what a reader derives from its frames (the address
 * of each physical frame)? Then "pcs" is left out. */
static bool pcs_derivable(const struct cli_stack *s)
{
    if (!s->nframes)
        return true; /* the frames are the PCs */
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nframes; i++) {
        if (s->frames[i].inlined && i + 1 < s->nframes)
            continue;
        if (k >= s->npcs || s->pcs[k] != s->frames[i].addr)
            return false;
        k++;
    }
    return k == s->npcs;
}

/* Decimal digits of v into buf (no NUL); their count. */
static size_t put_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10));
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* A stack's text, built without stdio's format parsing (100,000 stacks of
 * 20 numbers each: fprintf was the writer's largest cost after the frames). */
struct jline {
    char b[1024];
    size_t n;
};

static void jl_str(struct jline *l, const char *s)
{
    size_t k = strlen(s);
    memcpy(l->b + l->n, s, k);
    l->n += k;
}

static void jl_u64(struct jline *l, uint64_t v)
{
    l->n += put_u64(l->b + l->n, v);
}

static void jl_i64(struct jline *l, int64_t v)
{
    if (v < 0) {
        l->b[l->n++] = '-';
        jl_u64(l, (uint64_t)0 - (uint64_t)v);
    } else {
        jl_u64(l, (uint64_t)v);
    }
}

/* json_num's text: the estimate rounded as "%.0f" rounds (to nearest,
 * ties to even), integers below 2^53 without printf. */
static void jl_num(struct jline *l, double v)
{
    if (!isfinite(v) || v < 0)
        v = 0;
    if (v < 9007199254740992.0) {
        jl_u64(l, (uint64_t)nearbyint(v));
        return;
    }
    l->n += (size_t)snprintf(l->b + l->n, 32, "%.0f", v);
}

/* The stack's frame indices, written through a buffer (millions of them:
 * one fprintf each was the writer's largest cost). */
static void write_frame_ids(FILE *out, const uint32_t *ids, size_t n)
{
    char buf[4096];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (len > sizeof(buf) - 16) {
            fwrite(buf, 1, len, out);
            len = 0;
        }
        if (i) {
            buf[len++] = ',';
            buf[len++] = ' ';
        }
        len += put_u64(buf + len, ids[i]);
    }
    fwrite(buf, 1, len, out);
}

static void write_stack(FILE *out, const struct cli_stack *s, size_t index, const struct json_ftab *t, int32_t pid)
{
    struct jline l;
    l.n = 0;
    jl_str(&l, "    {\"id\": ");
    jl_u64(&l, index);
    jl_str(&l, ", \"pid\": "); /* its process (issue 28) */
    jl_i64(&l, pid);
    jl_str(&l, ", \"kind\": \"");
    jl_str(&l, cli_profile_kind_name(s->kind));
    jl_str(&l, "\", \"live_bytes\": ");
    jl_num(&l, s->live_bytes);
    jl_str(&l, ", \"live_objects\": ");
    jl_num(&l, s->live_objects);
    jl_str(&l, ", \"alloc_bytes\": ");
    jl_num(&l, s->alloc_bytes);
    jl_str(&l, ", \"alloc_objects\": ");
    jl_num(&l, s->alloc_objects);
    jl_str(&l, ",\n     \"sampled\": {\"live_bytes\": ");
    jl_u64(&l, s->raw_live_bytes);
    jl_str(&l, ", \"live_objects\": ");
    jl_u64(&l, s->raw_live_objects);
    jl_str(&l, ", \"alloc_bytes\": ");
    jl_u64(&l, s->raw_alloc_bytes);
    jl_str(&l, ", \"alloc_objects\": ");
    jl_u64(&l, s->raw_alloc_objects);
    jl_str(&l, "}, \"first_tid\": ");
    jl_i64(&l, s->first_tid);
    jl_str(&l, ",\n     \"oldest_live_ns\": ");
    jl_u64(&l, s->oldest_live_ns);
    jl_str(&l, ", \"live_age_sum_ms\": ");
    jl_u64(&l, s->live_age_sum_ms);
    jl_str(&l, ", \"growth\": [");
    for (unsigned k = 0; k < HI_GROWTH_POINTS; k++) {
        if (k)
            jl_str(&l, ", ");
        jl_i64(&l, s->growth[k]);
    }
    jl_str(&l, "],\n");
    fwrite(l.b, 1, l.n, out); /* at most about 600 bytes: 20 numbers of 20 digits and the keys */
    if (!pcs_derivable(s)) {
        fputs("     \"pcs\": [", out);
        for (uint32_t i = 0; i < s->npcs; i++)
            fprintf(out, "%s\"0x%" PRIx64 "\"", i ? ", " : "", s->pcs[i]);
        fputs("],\n", out);
    }
    fputs("     \"frames\": [", out);
    write_frame_ids(out, t->ids + t->first[index], t->first[index + 1] - t->first[index]);
    fputs("]}", out);
}

/* "debuginfo_missing": modules of the stacks without debug information
 * and what would give them some (cli/symbolize/debughint.h). */
static void write_debug_hints(FILE *out, const struct cli_profile *p)
{
    fputs(",\n  \"debuginfo_missing\": [", out);
    cli_debughint_prefetch(p->debug_hints, p->ndebug_hints);
    for (size_t i = 0; i < p->ndebug_hints; i++) {
        const struct cli_debug_hint *h = &p->debug_hints[i];
        char buf[1024], file[512];
        fputs(i ? ",\n    {\"module\": " : "\n    {\"module\": ", out);
        cli_json_write_str(out, h->module);
        fputs(", \"build_id\": ", out);
        cli_json_write_str(out, h->build_id);
        fputs(", \"debug_file\": ", out);
        cli_json_write_str(out, h->build_id ? cli_debughint_debug_file(h->build_id, file, sizeof(file)) : NULL);
        fputs(", \"package\": ", out);
        const char *package = cli_debughint_package_of(h);
        cli_json_write_str(out, package);
        fputs(", \"debug_package\": ", out);
        cli_json_write_str(out, package ? cli_debughint_debug_package(package, buf, sizeof(buf)) : NULL);
        fputs(", \"hint\": ", out);
        cli_json_write_str(out, cli_debughint_line(h, buf, sizeof(buf)));
        fputc('}', out);
    }
    fputs(p->ndebug_hints ? "\n  ]" : "]", out);
}

/* "by" and "groups": the --by view (cli/report/views.h), ranked. */
static int write_groups(FILE *out, const struct cli_profile *p, const struct cli_report_options *opt)
{
    struct cli_view_result r;
    int rc = cli_view_build(p, opt->by, opt->leaks, &r);
    if (rc < 0)
        return rc;
    fprintf(out, "  \"by\": \"%s\",\n  \"groups\": [", cli_view_name(opt->by));
    for (size_t i = 0; i < r.n; i++) {
        const struct cli_group *g = &r.groups[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        cli_json_write_str(out, g->name);
        fputs(", \"module\": ", out);
        cli_json_write_str(out, g->module);
        if (opt->by == CLI_VIEW_THREAD)
            fprintf(out, ", \"tid\": %d", (int)g->tid);
        if (opt->by == CLI_VIEW_PROCESS)
            fprintf(out, ", \"pid\": %d", (int)g->pid);
        fprintf(out, ", \"stacks\": %zu,\n     \"live_bytes\": ", g->stacks);
        const double v[] = { g->live_bytes, g->live_objects, g->alloc_bytes, g->alloc_objects,
                             g->cum_live_bytes, g->cum_live_objects, g->cum_alloc_bytes, g->cum_alloc_objects };
        static const char *const keys[] = { "live_bytes", "live_objects", "alloc_bytes", "alloc_objects",
                                            "cum_live_bytes", "cum_live_objects", "cum_alloc_bytes",
                                            "cum_alloc_objects" };
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
            if (k)
                fprintf(out, k == 4 ? ",\n     \"%s\": " : ", \"%s\": ", keys[k]);
            json_num(out, v[k]);
        }
        fputc('}', out);
    }
    fputs(r.n ? "\n  ],\n" : "],\n", out);
    cli_view_free(&r);
    return 0;
}

static void write_threads(FILE *out, const struct cli_profile *p)
{
    fputs("  \"threads\": [", out);
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct cli_thread *t = &p->threads[i];
        fprintf(out, "%s\n    {\"tid\": %d, \"name\": ", i ? "," : "", (int)t->tid);
        cli_json_write_str(out, t->name);
        fprintf(out,
                ", \"alive\": %s, \"alloc_bytes\": %" PRIu64 ", \"alloc_calls\": %" PRIu64
                ", \"free_bytes\": %" PRIu64 ", \"free_calls\": %" PRIu64 "}",
                t->alive ? "true" : "false", t->alloc_bytes, t->alloc_calls, t->free_bytes, t->free_calls);
    }
    fputs(p->nthreads ? "\n  ],\n" : "],\n", out);
}

static void write_histogram(FILE *out, const struct cli_profile *p)
{
    bool first = true;
    fputs("  \"histogram\": [", out);
    for (unsigned i = 0; i < HI_HIST_CLASSES; i++) {
        if (!p->hist.calls[i] && !p->hist.bytes[i])
            continue;
        uint64_t lo = i ? 1ull << i : 0, hi = (1ull << (i + 1)) - 1;
        /* The top class has no upper bound that fits a JSON reader's
         * 64-bit signed integer: null. */
        char max[24] = "null";
        if (i < 63)
            snprintf(max, sizeof(max), "%" PRIu64, hi);
        fprintf(out,
                "%s\n    {\"min_size\": %" PRIu64 ", \"max_size\": %s, \"calls\": %" PRIu64
                ", \"bytes\": %" PRIu64 "}",
                first ? "" : ",", lo, max, p->hist.calls[i], p->hist.bytes[i]);
        first = false;
    }
    fputs(first ? "],\n" : "\n  ],\n", out);
}

/* A tick's top risers as [stack, grew, live], the stack an index into
 * "stacks" (the agent's bucket found among them; one not found is left
 * out). */
static void write_tick_top(FILE *out, const struct cli_tick *t, const struct cli_tick_top_index *ix)
{
    fputs(", \"top\": [", out);
    bool first = true;
    for (unsigned k = 0; k < t->ntop && k < HI_TICK_TOP; k++) {
        int64_t st = cli_tick_top_stack(ix, t, k);
        if (st < 0)
            continue;
        fprintf(out, "%s[%" PRId64 ", %" PRId64 ", %" PRIu64 "]", first ? "" : ", ", st, t->top_grew[k],
                t->top_live[k]);
        first = false;
    }
    fputs("]", out);
}

/* A tick's kept risers as [stack, live] (found as above). */
static void write_tick_kept(FILE *out, const struct cli_tick *t, const struct cli_tick_top_index *ix)
{
    fputs(", \"kept\": [", out);
    bool first = true;
    for (unsigned k = 0; k < t->nkept && k < HI_TICK_KEPT; k++) {
        int64_t st = cli_tick_kept_stack(ix, t, k);
        if (st < 0)
            continue;
        fprintf(out, "%s[%" PRId64 ", %" PRIu64 "]", first ? "" : ", ", st, t->kept_live[k]);
        first = false;
    }
    fputs("]", out);
}

static int write_ticks(FILE *out, const struct cli_profile *p)
{
    struct cli_tick_top_index ix = { 0, NULL, 0 };
    bool top = cli_ticks_have_top(p);
    if (top && cli_tick_top_index_init(&ix, p) < 0)
        return -ENOMEM;
    fputs("  \"ticks\": [", out);
    for (size_t i = 0; i < p->nticks; i++) {
        const struct cli_tick *t = &p->ticks[i];
        fprintf(out,
                "%s\n    {\"t_s\": %.3f, \"live_bytes\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
                ", \"rss_bytes\": %" PRIu64,
                i ? "," : "", t->t_s, t->live_bytes, t->alloc_bytes, t->rss_bytes);
        if (p->nprocesses > 1) /* whose tick: the top's stacks are that process's */
            fprintf(out, ", \"pid\": %d", (int)(t->pid ? t->pid : p->pid));
        if (top && t->ntop)
            write_tick_top(out, t, &ix);
        if (top && t->nkept)
            write_tick_kept(out, t, &ix);
        fputs("}", out);
    }
    fputs(p->nticks ? "\n  ]" : "]", out);
    cli_tick_top_index_free(&ix);
    return 0;
}

static int write_leaks(FILE *out, const struct cli_profile *p)
{
    struct cli_leak_views v;
    if (cli_leaks_views(p, &v) < 0)
        return -ENOMEM;
    const struct cli_leak *lk = v.leaks;
    const struct cli_growth *gr = v.growing;
    size_t nl = v.nleaks, ng = v.ngrowing;
    fputs(",\n  \"leaks\": [", out);
    for (size_t i = 0; i < nl; i++) {
        const struct cli_stack *s = &p->stacks[lk[i].stack];
        fprintf(out, "%s\n    {\"stack\": %zu, \"live_bytes\": ", i ? "," : "", lk[i].stack);
        json_num(out, s->live_bytes);
        fputs(", \"live_objects\": ", out);
        json_num(out, s->live_objects);
        fprintf(out, ", \"oldest_age_s\": %.3f, \"mean_age_s\": %.3f}", lk[i].oldest_age_s, lk[i].mean_age_s);
    }
    fputs(nl ? "\n  ],\n  \"growing\": [" : "],\n  \"growing\": [", out);
    for (size_t i = 0; i < ng; i++) {
        const struct cli_stack *s = &p->stacks[gr[i].stack];
        fprintf(out, "%s\n    {\"stack\": %zu, \"bytes_per_s\": ", i ? "," : "", gr[i].stack);
        json_num(out, gr[i].per_s);
        fputs(", \"first_bytes\": ", out);
        json_num(out, gr[i].first);
        fputs(", \"last_bytes\": ", out);
        json_num(out, gr[i].last);
        fputs(", \"growth\": [", out);
        bool first = true;
        for (unsigned k = 0; k < HI_GROWTH_POINTS; k++) {
            if (s->growth[k] < 0)
                continue;
            fprintf(out, "%s%" PRId64, first ? "" : ", ", s->growth[k]);
            first = false;
        }
        fputs("]}", out);
    }
    fputs(ng ? "\n  ]" : "]", out);
    cli_leaks_views_free(&v);
    return 0;
}

int cli_report_json(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    fprintf(out, "{\n  \"schema\": \"heapinject-profile\", \"version\": %d,\n", JSON_SCHEMA_VERSION);
    fprintf(out, "  \"pid\": %d, \"rate\": %" PRIu64 ", \"duration_s\": %.3f, \"tick_ms\": %u, \"rss_bytes\": %" PRIu64 ",\n",
            (int)p->pid, p->rate, p->duration_s, p->tick_ms, p->rss_bytes);
    fprintf(out, "  \"attach_ns\": %" PRIu64 ", \"snapshot_ns\": %" PRIu64 ",\n", p->attach_ns, p->snapshot_ns);
    cli_report_processes_json(p, out);
    cli_report_children_json(p->pid, opt->children, p->duration_s, out);
    if (opt->note) {
        fputs("  \"note\": ", out);
        cli_json_write_str(out, opt->note);
        fputs(",\n", out);
    }
    if (opt->target_exit) {
        const struct cli_target_exit *x = opt->target_exit;
        fprintf(out, "  \"target_exit\": {\"as_of_s_before\": %.3f, \"stacks\": %s, ", x->as_of_s_before,
                x->stacks ? "true" : "false");
        if (!x->status_known)
            fputs("\"signal\": null, \"exit_code\": null", out);
        else if (x->signal)
            fprintf(out, "\"signal\": %d, \"exit_code\": null", x->signal);
        else
            fprintf(out, "\"signal\": null, \"exit_code\": %d", x->exit_code);
        if (x->pushed == 1)
            fprintf(out, ", \"snapshot\": \"signal\", \"snapshot_signal\": %d, \"snapshot_si_code\": %d",
                    x->push_signal, x->push_si_code);
        else if (x->pushed == 2)
            fprintf(out, ", \"snapshot\": \"pressure\", \"pressure\": {\"measure\": \"%s\", \"usage_bytes\": %" PRIu64
                    ", \"limit_bytes\": %" PRIu64 "}", x->pressure_measure, x->pressure_usage, x->pressure_limit);
        else
            fprintf(out, ", \"snapshot\": \"%s\"", x->stacks ? "periodic" : "none");
        fputs("},\n", out);
    }
    write_totals(out, &p->totals);
    write_mmap(out, p);
    write_pymalloc(out, p);
    write_walks(out, p);
    write_python(out, p);
    /* RSS by holder (docs/JSON.md "memory"); null when not known (a
     * profile read back from a file). */
    fputs("  \"memory\": ", out);
    cli_memory_write_json(p->memory, "  ", out);
    fputs(",\n", out);
    if (p->census) { /* heapinject -p --census (docs/JSON.md "Census") */
        fputs("  \"census\": ", out);
        cli_census_write_json_body(out, p->census, opt->top ? opt->top : 100);
        fputs(",\n", out);
    }
    if (opt->by != CLI_VIEW_STACK) {
        int rc = write_groups(out, p, opt);
        if (rc < 0)
            return rc;
    }
    struct json_maps jm = { NULL, 0 };
    if (p->maps && cli_maps_parse(p->maps, p->maps_len, &jm.maps, &jm.n) < 0)
        return -ENOMEM;
    struct json_ftab ft;
    if (ftab_build(&ft, p) < 0) {
        ftab_free(&ft);
        free(jm.maps);
        return -ENOMEM;
    }
    write_frame_table(out, &ft, &jm);
    free(jm.maps);
    fputs("  \"stacks\": [", out);
    for (size_t i = 0; i < p->nstacks; i++) {
        fputs(i ? ",\n" : "\n", out);
        write_stack(out, &p->stacks[i], i, &ft, cli_stack_pid(p, &p->stacks[i]));
    }
    ftab_free(&ft);
    fputs(p->nstacks ? "\n  ],\n" : "],\n", out);
    write_threads(out, p);
    write_histogram(out, p);
    if (write_ticks(out, p) < 0)
        return -ENOMEM;
    if (opt->leaks && write_leaks(out, p) < 0)
        return -ENOMEM;
    write_debug_hints(out, p);
    /* The maps text makes the file a complete profile: `heapinject report`
     * can symbolize or convert it later. */
    fputs(",\n  \"maps\": ", out);
    cli_json_write_str_len(out, p->maps, p->maps ? p->maps_len : 0);
    fputs("\n}\n", out);
    return ferror(out) ? -EIO : 0;
}
