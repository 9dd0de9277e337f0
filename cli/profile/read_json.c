/* read_json.c - heapinject's JSON profile (cli/report/json.c,
 * "schema": "heapinject-profile", versions 1 and 2) back into a cli_profile.
 *
 * Version 1 has each stack's frames inline; version 2 (issue 17) has each
 * distinct frame once in a top-level "frames" table and stacks' "frames"
 * as indices into it. A version 2 profile's strings are interned into the
 * profile's pool (cli/util/intern.h), as the symbolizer's are.
 *
 * Required: schema, version, stacks (each with its four values and frames).
 * Everything else is read when present and left zero when not, so files of
 * older and newer writers of the same schema version load. Keys read beyond
 * what cli/report/json.c writes today (a newer writer may add them): "maps"
 * (the maps text), "attach_ns", "snapshot_ns", and per stack "pcs",
 * "growth", "oldest_live_ns", "live_age_sum_ms". Growth points also come
 * from the "growing" ranking of --leaks files.
 *
 * A stack whose frames carry neither function nor module is an
 * unsymbolized one: its frames' addresses become its PCs and it gets no
 * frames, so that the symbolizer can fill them in.
 */
#include "cli/profile/read.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/memory/report.h"
#include "cli/profile/read_census.h"
#include "cli/profile/read_jsonparse.h"
#include "cli/profile/read_processes.h"
#include "cli/util/intern.h"

#define SCHEMA_NAME "heapinject-profile"
#define SCHEMA_VERSION 2        /* the newest this reader knows */
#define SCHEMA_VERSION_OLDEST 1
/* Frames of all stacks together. A 2-byte index ("0,") of version 2 is a
 * 48-byte frame here: the bound keeps a hostile file from asking for more
 * than about 1.5 GiB. The agent keeps at most 8 Mi PCs (payload/bucket.h);
 * inlining expands each into a few frames. */
#define MAX_FRAMES_IN_ALL (1u << 25)

struct jr {
    const struct cli_json_doc *d;
    char *why;
    size_t whylen;
    uint64_t version;
    size_t frames_in_all;       /* read so far, against MAX_FRAMES_IN_ALL */
    struct cli_frame *table;    /* version 2: the "frames" table */
    size_t ntable;
    struct cli_intern *strings; /* version 2: the table's strings (the profile's pool) */
};

static int bad(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct jr *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_profile_read_vbad(r->why, r->whylen, fmt, ap);
    va_end(ap);
    return rc;
}

static const struct cli_json_node *get(struct jr *r, const struct cli_json_node *o, const char *k)
{
    return cli_json_get(r->d, o, k);
}

/* Optional unsigned member: absent or null leaves *out; present but not a
 * non-negative integer is an error. */
static int opt_u64(struct jr *r, const struct cli_json_node *o, const char *k, uint64_t *out,
                   const char *where)
{
    const struct cli_json_node *n = get(r, o, k);
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    if (!cli_json_u64(r->d, n, out))
        return bad(r, "%s: \"%s\" is not a non-negative integer", where, k);
    return 0;
}

/* Longer than any profiling session (about 31 years): a file that says
 * more is corrupt, and the writers turn seconds into nanoseconds. */
#define MAX_SECONDS 1e9

static int opt_double(struct jr *r, const struct cli_json_node *o, const char *k, double *out,
                      const char *where)
{
    const struct cli_json_node *n = get(r, o, k);
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    /* Finite, and no more than a 64-bit count: writers convert these to
     * integers (durations to nanoseconds, below). */
    if (!cli_json_double(r->d, n, out) || !(*out >= 0 && *out <= 18446744073709551615.0))
        return bad(r, "%s: \"%s\" is not a non-negative number", where, k);
    return 0;
}

static int req_double(struct jr *r, const struct cli_json_node *o, const char *k, double *out,
                      const char *where)
{
    if (!get(r, o, k))
        return bad(r, "%s: no \"%s\"", where, k);
    return opt_double(r, o, k, out, where);
}

static int opt_int(struct jr *r, const struct cli_json_node *o, const char *k, int64_t lo, int64_t hi,
                   int64_t *out, const char *where)
{
    const struct cli_json_node *n = get(r, o, k);
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    if (!cli_json_i64(r->d, n, out) || *out < lo || *out > hi)
        return bad(r, "%s: \"%s\" is not an integer in range", where, k);
    return 0;
}

/* An optional member n, which must be an array or an object: 0 when it
 * is absent or null (nothing to read), 1 when it has type t, else the
 * error "\"name\" is not an array" (or an object). */
static int present(struct jr *r, const struct cli_json_node *n, enum cli_json_type t, const char *name)
{
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    if (n->type != t)
        return bad(r, "\"%s\" is not %s", name, t == CLI_JSON_ARRAY ? "an array" : "an object");
    return 1;
}

/* "0x1a2b" -> value. */
static bool parse_hex(const char *s, uint64_t *out)
{
    if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
        return false;
    uint64_t v = 0;
    int digits = 0;
    for (s += 2; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        if (++digits > 16)
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

/* An optional string member copied with strdup (NULL when absent, null or
 * empty). */
static int opt_strdup(struct jr *r, const struct cli_json_node *o, const char *k, char **out,
                      const char *where)
{
    const struct cli_json_node *n = get(r, o, k);
    *out = NULL;
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    const char *s = cli_json_str(r->d, n);
    if (!s)
        return bad(r, "%s: \"%s\" is not a string", where, k);
    if (!s[0])
        return 0;
    if (!(*out = strdup(s)))
        return -ENOMEM;
    return 0;
}

/* opt_strdup for a version 2 table frame: the pool's copy. */
static int opt_intern(struct jr *r, const struct cli_json_node *o, const char *k, char **out, const char *where)
{
    const struct cli_json_node *n = get(r, o, k);
    *out = NULL;
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    const char *s = cli_json_str(r->d, n);
    if (!s)
        return bad(r, "%s: \"%s\" is not a string", where, k);
    if (!s[0])
        return 0;
    if (!(*out = (char *)cli_intern_str(r->strings, s)))
        return -ENOMEM;
    return 0;
}

static int read_frame(struct jr *r, const struct cli_json_node *fn, struct cli_frame *f, const char *where)
{
    const struct cli_json_node *n;
    int64_t line = 0;
    int err;
    int (*str)(struct jr *, const struct cli_json_node *, const char *, char **, const char *) =
        r->strings ? opt_intern : opt_strdup;
    if (fn->type != CLI_JSON_OBJECT)
        return bad(r, "%s: a frame is not an object", where);
    if (!parse_hex(cli_json_str(r->d, get(r, fn, "addr")), &f->addr))
        return bad(r, "%s: frame without a hex \"addr\"", where);
    n = get(r, fn, "module_offset");
    if (n && n->type != CLI_JSON_NULL && !parse_hex(cli_json_str(r->d, n), &f->module_offset))
        return bad(r, "%s: frame \"module_offset\" is not hex", where);
    if ((err = str(r, fn, "function", &f->function, where)) ||
        (err = str(r, fn, "module", &f->module, where)) ||
        (err = str(r, fn, "file", &f->file, where)) ||
        (err = opt_int(r, fn, "line", 0, INT32_MAX, &line, where)))
        return err;
    f->line = (int)line;
    n = get(r, fn, "inlined");
    if (n && n->type != CLI_JSON_BOOL && n->type != CLI_JSON_NULL)
        return bad(r, "%s: frame \"inlined\" is not a boolean", where);
    f->inlined = n && n->b;
    return 0;
}

static int read_growth(struct jr *r, const struct cli_json_node *arr, struct cli_stack *s, const char *where)
{
    if (!arr || arr->type == CLI_JSON_NULL)
        return 0;
    if (arr->type != CLI_JSON_ARRAY || arr->count > HI_GROWTH_POINTS)
        return bad(r, "%s: \"growth\" is not an array of at most %u numbers", where, HI_GROWTH_POINTS);
    /* A full array is taken as it is; a shorter one (the "growing" ranking
     * lists valid points only) holds the most recent points: align it to
     * the end. */
    size_t k = HI_GROWTH_POINTS - arr->count;
    for (const struct cli_json_node *g = cli_json_first(r->d, arr); g; g = cli_json_next(r->d, g), k++)
        if (!cli_json_i64(r->d, g, &s->growth[k]))
            return bad(r, "%s: \"growth\" holds a non-integer", where);
    return 0;
}

static int read_stack(struct jr *r, const struct cli_json_node *sn, struct cli_stack *s, size_t idx)
{
    char where[48];
    int err;
    snprintf(where, sizeof(where), "stack %zu", idx);
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        s->growth[g] = -1;
    if (sn->type != CLI_JSON_OBJECT)
        return bad(r, "%s is not an object", where);
    if ((err = req_double(r, sn, "live_bytes", &s->live_bytes, where)) ||
        (err = req_double(r, sn, "live_objects", &s->live_objects, where)) ||
        (err = req_double(r, sn, "alloc_bytes", &s->alloc_bytes, where)) ||
        (err = req_double(r, sn, "alloc_objects", &s->alloc_objects, where)))
        return err;
    const struct cli_json_node *raw = get(r, sn, "sampled");
    if (raw && raw->type != CLI_JSON_OBJECT && raw->type != CLI_JSON_NULL)
        return bad(r, "%s: \"sampled\" is not an object", where);
    int64_t tid = 0, pid = 0;
    if ((err = opt_int(r, sn, "pid", 0, INT32_MAX, &pid, where)) || /* issue 28 */
        (err = opt_u64(r, raw, "live_bytes", &s->raw_live_bytes, where)) ||
        (err = opt_u64(r, raw, "live_objects", &s->raw_live_objects, where)) ||
        (err = opt_u64(r, raw, "alloc_bytes", &s->raw_alloc_bytes, where)) ||
        (err = opt_u64(r, raw, "alloc_objects", &s->raw_alloc_objects, where)) ||
        (err = opt_int(r, sn, "first_tid", INT32_MIN, INT32_MAX, &tid, where)) ||
        (err = opt_u64(r, sn, "oldest_live_ns", &s->oldest_live_ns, where)) ||
        (err = opt_u64(r, sn, "live_age_sum_ms", &s->live_age_sum_ms, where)) ||
        (err = read_growth(r, get(r, sn, "growth"), s, where)))
        return err;
    s->first_tid = (int32_t)tid;
    s->pid = (int32_t)pid;
    const struct cli_json_node *kn = get(r, sn, "kind"); /* absent before issue 14: malloc */
    if (kn && kn->type != CLI_JSON_NULL) {
        int kind = kn->type == CLI_JSON_STRING ? cli_kind_by_name(cli_json_str(r->d, kn)) : -1;
        if (kind < 0)
            return bad(r, "%s: \"kind\" is not \"malloc\" or \"mmap\"", where);
        s->kind = (uint32_t)kind;
    }

    const struct cli_json_node *frames = get(r, sn, "frames");
    if (!frames || frames->type != CLI_JSON_ARRAY)
        return bad(r, "%s: no \"frames\" array", where);
    if (frames->count > UINT32_MAX / 2 || frames->count > MAX_FRAMES_IN_ALL - r->frames_in_all)
        return bad(r, "%s: too many frames (more than %u in all)", where, MAX_FRAMES_IN_ALL);
    r->frames_in_all += frames->count;
    s->frames = calloc(frames->count ? frames->count : 1, sizeof(*s->frames));
    if (!s->frames)
        return -ENOMEM;
    s->shared_strings = r->version >= 2; /* the table's strings: the pool's */
    bool named = false;
    for (const struct cli_json_node *f = cli_json_first(r->d, frames); f; f = cli_json_next(r->d, f)) {
        struct cli_frame *cf = &s->frames[s->nframes++];
        if (r->version >= 2) {
            uint64_t id;
            if (!cli_json_u64(r->d, f, &id) || id >= r->ntable)
                return bad(r, "%s: \"frames\" holds %s (the table has %zu frames)", where,
                           f->type == CLI_JSON_NUMBER ? "an index past the \"frames\" table" : "a non-index",
                           r->ntable);
            *cf = r->table[id];
        } else if ((err = read_frame(r, f, cf, where))) {
            return err;
        }
        named |= cf->function || cf->module;
    }

    /* PCs: given, else one per physical frame. */
    const struct cli_json_node *pcs = get(r, sn, "pcs");
    if (pcs && pcs->type == CLI_JSON_ARRAY) {
        if (pcs->count > UINT32_MAX / 2)
            return bad(r, "%s: too many pcs", where);
        s->pcs = calloc(pcs->count ? pcs->count : 1, sizeof(*s->pcs));
        if (!s->pcs)
            return -ENOMEM;
        for (const struct cli_json_node *pc = cli_json_first(r->d, pcs); pc; pc = cli_json_next(r->d, pc))
            if (!parse_hex(cli_json_str(r->d, pc), &s->pcs[s->npcs++]))
                return bad(r, "%s: \"pcs\" holds a value that is not hex", where);
    } else {
        s->pcs = calloc(s->nframes ? s->nframes : 1, sizeof(*s->pcs));
        if (!s->pcs)
            return -ENOMEM;
        for (uint32_t i = 0; i < s->nframes; i++)
            if (!s->frames[i].inlined || i + 1 == s->nframes)
                s->pcs[s->npcs++] = s->frames[i].addr;
    }
    if (!named)
        cli_stack_clear_frames(s); /* addresses only: for the symbolizer */
    return 0;
}

static int read_totals(struct jr *r, const struct cli_json_node *t, struct hi_totals *o)
{
    static const char where[] = "totals";
    int has = present(r, t, CLI_JSON_OBJECT, "totals");
    if (has <= 0)
        return has;
    int err;
    if ((err = opt_u64(r, t, "alloc_bytes", &o->est_alloc_bytes, where)) ||
        (err = opt_u64(r, t, "alloc_objects", &o->est_alloc_objects, where)) ||
        (err = opt_u64(r, t, "free_bytes", &o->est_free_bytes, where)) ||
        (err = opt_u64(r, t, "free_objects", &o->est_free_objects, where)) ||
        (err = opt_u64(r, t, "live_bytes", &o->est_live_bytes, where)) ||
        (err = opt_u64(r, t, "live_objects", &o->est_live_objects, where)) ||
        (err = opt_u64(r, t, "exact_alloc_bytes", &o->exact_alloc_bytes, where)) ||
        (err = opt_u64(r, t, "exact_alloc_calls", &o->exact_alloc_calls, where)) ||
        (err = opt_u64(r, t, "exact_free_bytes", &o->exact_free_bytes, where)) ||
        (err = opt_u64(r, t, "exact_free_calls", &o->exact_free_calls, where)) ||
        (err = opt_u64(r, t, "samples", &o->raw_samples, where)) ||
        (err = opt_u64(r, t, "dropped_samples", &o->dropped_samples, where)) ||
        (err = opt_u64(r, t, "stacks", &o->buckets, where)) ||
        (err = opt_u64(r, t, "profiler_bytes", &o->payload_mem_bytes, where)))
        return err;
    return 0;
}

/* "mmap": the exact counts (the estimates are the stacks' sums). */
static int read_mmap(struct jr *r, const struct cli_json_node *m, struct cli_profile *p)
{
    const char *where = "\"mmap\"";
    int has = present(r, m, CLI_JSON_OBJECT, "mmap");
    if (has <= 0)
        return has;
    if (!get(r, m, "map_calls"))
        return 0; /* the estimates alone: an agent without exact counts */
    struct hi_snap_mmap *o = &p->mmap;
    int err;
    if ((err = opt_u64(r, m, "map_calls", &o->map_calls, where)) ||
        (err = opt_u64(r, m, "map_bytes", &o->map_bytes, where)) ||
        (err = opt_u64(r, m, "unmap_calls", &o->unmap_calls, where)) ||
        (err = opt_u64(r, m, "remap_calls", &o->remap_calls, where)) ||
        (err = opt_u64(r, m, "tracked", &o->tracked, where)) ||
        (err = opt_u64(r, m, "dropped_samples", &o->dropped, where)))
        return err;
    p->have_mmap = true;
    return 0;
}

/* "stack_walks": how the stack walks went (absent from older profiles). */
static int read_walks(struct jr *r, const struct cli_json_node *w, struct cli_profile *p)
{
    const char *where = "\"stack_walks\"";
    int has = present(r, w, CLI_JSON_OBJECT, "stack_walks");
    if (has <= 0)
        return has;
    int err;
    uint64_t walks = 0, truncated = 0, budget = 0, at_budget = 0; /* locals: the wire struct is packed */
    if ((err = opt_u64(r, w, "walks", &walks, where)) || (err = opt_u64(r, w, "truncated", &truncated, where)) ||
        (err = opt_u64(r, w, "budget_bytes", &budget, where)) ||
        (err = opt_u64(r, w, "budget_dropped", &at_budget, where)))
        return err;
    if (truncated > walks)
        return bad(r, "%s: %" PRIu64 " truncated of %" PRIu64 " walks", where, truncated, walks);
    p->walks.walks = walks;
    p->walks.truncated = truncated;
    p->walks.budget_bytes = budget;
    p->walks.budget_dropped = at_budget;
    p->have_walks = true;
    return 0;
}

static int read_threads(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    int has = present(r, a, CLI_JSON_ARRAY, "threads");
    if (has <= 0)
        return has;
    p->threads = calloc(a->count ? a->count : 1, sizeof(*p->threads));
    if (!p->threads)
        return -ENOMEM;
    for (const struct cli_json_node *t = cli_json_first(r->d, a); t; t = cli_json_next(r->d, t)) {
        struct cli_thread *th = &p->threads[p->nthreads++];
        char where[32];
        int64_t tid = 0;
        int err;
        snprintf(where, sizeof(where), "thread %zu", p->nthreads - 1);
        if (t->type != CLI_JSON_OBJECT)
            return bad(r, "%s is not an object", where);
        if ((err = opt_int(r, t, "tid", INT32_MIN, INT32_MAX, &tid, where)) ||
            (err = opt_u64(r, t, "alloc_bytes", &th->alloc_bytes, where)) ||
            (err = opt_u64(r, t, "alloc_calls", &th->alloc_calls, where)) ||
            (err = opt_u64(r, t, "free_bytes", &th->free_bytes, where)) ||
            (err = opt_u64(r, t, "free_calls", &th->free_calls, where)))
            return err;
        th->tid = (int32_t)tid;
        const char *name = cli_json_str(r->d, get(r, t, "name"));
        if (name)
            snprintf(th->name, sizeof(th->name), "%s", name);
        const struct cli_json_node *alive = get(r, t, "alive");
        th->alive = alive && alive->type == CLI_JSON_BOOL && alive->b;
    }
    return 0;
}

static int read_histogram(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    int has = present(r, a, CLI_JSON_ARRAY, "histogram");
    if (has <= 0)
        return has;
    for (const struct cli_json_node *h = cli_json_first(r->d, a); h; h = cli_json_next(r->d, h)) {
        uint64_t min = 0, calls = 0, bytes = 0;
        int err;
        if (h->type != CLI_JSON_OBJECT)
            return bad(r, "a histogram entry is not an object");
        if ((err = opt_u64(r, h, "min_size", &min, "histogram")) ||
            (err = opt_u64(r, h, "calls", &calls, "histogram")) ||
            (err = opt_u64(r, h, "bytes", &bytes, "histogram")))
            return err;
        /* Class i holds sizes [2^i, 2^(i+1)); class 0 also holds size 0. */
        unsigned cls = 0;
        while (cls < 64 && min >> (cls + 1))
            cls++;
        if (cls >= HI_HIST_CLASSES || (min && min != 1ull << cls && cls))
            return bad(r, "histogram: min_size %" PRIu64 " is not a size class", min);
        p->hist.calls[cls] = calls;
        p->hist.bytes[cls] = bytes;
    }
    return 0;
}

static int read_ticks(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    int has = present(r, a, CLI_JSON_ARRAY, "ticks");
    if (has <= 0)
        return has;
    p->ticks = calloc(a->count ? a->count : 1, sizeof(*p->ticks));
    if (!p->ticks)
        return -ENOMEM;
    for (const struct cli_json_node *t = cli_json_first(r->d, a); t; t = cli_json_next(r->d, t)) {
        struct cli_tick *tk = &p->ticks[p->nticks++];
        int err;
        if (t->type != CLI_JSON_OBJECT)
            return bad(r, "a tick is not an object");
        if ((err = opt_double(r, t, "t_s", &tk->t_s, "tick")) ||
            (err = opt_u64(r, t, "live_bytes", &tk->live_bytes, "tick")) ||
            (err = opt_u64(r, t, "alloc_bytes", &tk->alloc_bytes, "tick")) ||
            (err = opt_u64(r, t, "rss_bytes", &tk->rss_bytes, "tick")))
            return err;
        if (tk->t_s > MAX_SECONDS)
            return bad(r, "tick: \"t_s\" %g is not a plausible time", tk->t_s);
    }
    return 0;
}

static int read_growing(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    if (!a || a->type != CLI_JSON_ARRAY)
        return 0;
    for (const struct cli_json_node *g = cli_json_first(r->d, a); g; g = cli_json_next(r->d, g)) {
        uint64_t idx;
        if (!cli_json_u64(r->d, get(r, g, "stack"), &idx) || idx >= p->nstacks)
            return bad(r, "\"growing\" refers to a stack that does not exist");
        /* The stack's own "growth" (all points, in place) wins. */
        bool have = false;
        for (unsigned k = 0; k < HI_GROWTH_POINTS; k++)
            have |= p->stacks[idx].growth[k] >= 0;
        if (have)
            continue;
        int err = read_growth(r, get(r, g, "growth"), &p->stacks[idx], "growing");
        if (err)
            return err;
    }
    return 0;
}

/* Version 2's "frames": each distinct frame once. */
static int read_frame_table(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    if (!a || a->type != CLI_JSON_ARRAY)
        return bad(r, "no \"frames\" table (schema version 2)");
    if (a->count > MAX_FRAMES_IN_ALL)
        return bad(r, "\"frames\": more than %u frames", MAX_FRAMES_IN_ALL);
    if (!(p->strings = cli_intern_new()))
        return -ENOMEM;
    r->strings = p->strings;
    r->table = calloc(a->count ? a->count : 1, sizeof(*r->table));
    if (!r->table)
        return -ENOMEM;
    for (const struct cli_json_node *f = cli_json_first(r->d, a); f; f = cli_json_next(r->d, f)) {
        char where[48];
        snprintf(where, sizeof(where), "frame %zu", r->ntable);
        int err = read_frame(r, f, &r->table[r->ntable], where);
        if (err)
            return err;
        r->ntable++;
    }
    return 0;
}

/* "target_exit" (docs/JSON.md): how the process ended during the session
 * and which snapshot the file holds. */
static int read_target_exit(struct jr *r, const struct cli_json_node *x, struct cli_profile *p)
{
    int has = present(r, x, CLI_JSON_OBJECT, "target_exit");
    if (has <= 0)
        return has;
    struct cli_target_exit *e = &p->exit;
    int64_t sig = 0, code = 0;
    const struct cli_json_node *sn = get(r, x, "signal"), *cn = get(r, x, "exit_code");
    const struct cli_json_node *st = get(r, x, "stacks");
    int err;
    if ((err = opt_double(r, x, "as_of_s_before", &e->as_of_s_before, "target_exit")) ||
        (err = opt_int(r, x, "signal", 0, 128, &sig, "target_exit")) ||
        (err = opt_int(r, x, "exit_code", 0, 255, &code, "target_exit")))
        return err;
    if (e->as_of_s_before < 0 || e->as_of_s_before > MAX_SECONDS)
        return bad(r, "target_exit: \"as_of_s_before\" %g is not plausible", e->as_of_s_before);
    e->stacks = !st || st->type != CLI_JSON_BOOL || st->b;
    e->status_known = (sn && sn->type != CLI_JSON_NULL) || (cn && cn->type != CLI_JSON_NULL);
    e->signal = (int)sig;
    e->exit_code = (int)code;
    const char *snap = cli_json_str(r->d, get(r, x, "snapshot"));
    if (snap && !strcmp(snap, "signal")) {
        int64_t ps = 0, pc = 0;
        if ((err = opt_int(r, x, "snapshot_signal", 0, 128, &ps, "target_exit")) ||
            (err = opt_int(r, x, "snapshot_si_code", INT32_MIN, INT32_MAX, &pc, "target_exit")))
            return err;
        e->pushed = 1;
        e->push_signal = (int)ps;
        e->push_si_code = (int)pc;
    } else if (snap && !strcmp(snap, "pressure")) {
        const struct cli_json_node *pr = get(r, x, "pressure");
        if (!pr || pr->type != CLI_JSON_OBJECT)
            return bad(r, "target_exit: \"snapshot\": \"pressure\" without a \"pressure\" object");
        const char *m = cli_json_str(r->d, get(r, pr, "measure"));
        if ((err = opt_u64(r, pr, "usage_bytes", &e->pressure_usage, "target_exit.pressure")) ||
            (err = opt_u64(r, pr, "limit_bytes", &e->pressure_limit, "target_exit.pressure")))
            return err;
        e->pushed = 2;
        snprintf(e->pressure_measure, sizeof(e->pressure_measure), "%s", m ? m : "");
    }
    p->have_exit = true;
    return 0;
}

/* "debuginfo_missing": the modules the report named with what to install. */
static int read_debug_hints(struct jr *r, const struct cli_json_node *a, struct cli_profile *p)
{
    int has = present(r, a, CLI_JSON_ARRAY, "debuginfo_missing");
    if (has <= 0)
        return has;
    if (!a->count)
        return 0;
    if (!(p->debug_hints = calloc(a->count, sizeof(*p->debug_hints))))
        return -ENOMEM;
    for (const struct cli_json_node *h = cli_json_first(r->d, a); h; h = cli_json_next(r->d, h)) {
        struct cli_debug_hint *d = &p->debug_hints[p->ndebug_hints];
        int err;
        if (h->type != CLI_JSON_OBJECT)
            return bad(r, "debuginfo_missing: an entry that is not an object");
        p->ndebug_hints++;
        if ((err = opt_strdup(r, h, "module", &d->module, "debuginfo_missing")) ||
            (err = opt_strdup(r, h, "build_id", &d->build_id, "debuginfo_missing")) ||
            (err = opt_strdup(r, h, "package", &d->package, "debuginfo_missing")))
            return err;
        if (!d->module)
            return bad(r, "debuginfo_missing: an entry without \"module\"");
    }
    return 0;
}

static int read_doc(struct jr *r, struct cli_profile *p)
{
    const struct cli_json_node *root = &r->d->nodes[0];
    int err;
    if (root->type != CLI_JSON_OBJECT)
        return bad(r, "JSON, but not an object");
    const struct cli_json_node *census = get(r, root, "census");
    if (!get(r, root, "schema") && census) { /* `heapinject census --format json` */
        int64_t pid = 0;
        if ((err = opt_int(r, root, "pid", 0, INT32_MAX, &pid, "census")) ||
            (err = cli_census_from_json(r->d, census, (int32_t)pid, &p->census, r->why, r->whylen)))
            return err;
        p->pid = (int32_t)pid;
        p->census_only = true;
        return 0;
    }
    const char *schema = cli_json_str(r->d, get(r, root, "schema"));
    if (!schema || strcmp(schema, SCHEMA_NAME))
        return bad(r, "JSON without \"schema\": \"%s\"", SCHEMA_NAME);
    uint64_t version = 0;
    if (!cli_json_u64(r->d, get(r, root, "version"), &version))
        return bad(r, "no schema \"version\"");
    if (version < SCHEMA_VERSION_OLDEST || version > SCHEMA_VERSION)
        return bad(r, "schema version %" PRIu64 "; this heapinject reads versions %d to %d", version,
                   SCHEMA_VERSION_OLDEST, SCHEMA_VERSION);
    r->version = version;
    if (version >= 2 && (err = read_frame_table(r, get(r, root, "frames"), p)))
        return err;

    int64_t pid = 0, tick_ms = 0;
    if ((err = opt_int(r, root, "pid", 0, INT32_MAX, &pid, "profile")) ||
        (err = opt_u64(r, root, "rate", &p->rate, "profile")) ||
        (err = opt_double(r, root, "duration_s", &p->duration_s, "profile")) ||
        (err = opt_int(r, root, "tick_ms", 0, UINT32_MAX, &tick_ms, "profile")) ||
        (err = opt_u64(r, root, "rss_bytes", &p->rss_bytes, "profile")) ||
        (err = opt_u64(r, root, "attach_ns", &p->attach_ns, "profile")) ||
        (err = opt_u64(r, root, "snapshot_ns", &p->snapshot_ns, "profile")) ||
        (err = read_totals(r, get(r, root, "totals"), &p->totals)) ||
        (err = read_mmap(r, get(r, root, "mmap"), p)) ||
        (err = read_walks(r, get(r, root, "stack_walks"), p)))
        return err;
    if (p->duration_s > MAX_SECONDS)
        return bad(r, "profile: \"duration_s\" %g is not a plausible duration", p->duration_s);
    p->pid = (int32_t)pid;
    p->tick_ms = (uint32_t)tick_ms;
    if ((err = cli_memory_from_json(r->d, get(r, root, "memory"), &p->memory, r->why, r->whylen)))
        return err;

    const struct cli_json_node *stacks = get(r, root, "stacks");
    if (!stacks || stacks->type != CLI_JSON_ARRAY)
        return bad(r, "no \"stacks\" array");
    p->stacks = calloc(stacks->count ? stacks->count : 1, sizeof(*p->stacks));
    if (!p->stacks)
        return -ENOMEM;
    for (const struct cli_json_node *s = cli_json_first(r->d, stacks); s; s = cli_json_next(r->d, s)) {
        p->nstacks++;
        if ((err = read_stack(r, s, &p->stacks[p->nstacks - 1], p->nstacks - 1)))
            return err;
    }
    if ((err = read_threads(r, get(r, root, "threads"), p)) ||
        (err = read_histogram(r, get(r, root, "histogram"), p)) ||
        (err = read_ticks(r, get(r, root, "ticks"), p)) ||
        (err = read_growing(r, get(r, root, "growing"), p)))
        return err;

    if ((err = opt_strdup(r, root, "note", &p->note, "profile")) ||
        (err = read_target_exit(r, get(r, root, "target_exit"), p)) ||
        (err = read_debug_hints(r, get(r, root, "debuginfo_missing"), p)) ||
        (err = cli_profile_read_processes(r->d, get(r, root, "processes"), p, r->why, r->whylen)))
        return err;

    if (census && census->type != CLI_JSON_NULL &&
        (err = cli_census_from_json(r->d, census, p->pid, &p->census, r->why, r->whylen)))
        return err;

    const struct cli_json_node *maps = get(r, root, "maps");
    if (maps && maps->type != CLI_JSON_NULL) {
        if (maps->type != CLI_JSON_STRING)
            return bad(r, "\"maps\" is not a string");
        if (!(p->maps = strdup(cli_json_str(r->d, maps))))
            return -ENOMEM;
        p->maps_len = strlen(p->maps);
    }
    return 0;
}

int cli_profile_read_json(const char *text, size_t len, struct cli_profile *p, char *why,
                          size_t whylen)
{
    struct cli_json_doc doc;
    struct jr r = { &doc, why, whylen, 0, 0, NULL, 0, NULL };
    int err;

    memset(p, 0, sizeof(*p));
    err = cli_json_parse(text, len, &doc, why, whylen);
    if (!err)
        err = read_doc(&r, p);
    free(r.table); /* its strings are the profile's pool's */
    cli_json_free(&doc);
    if (err)
        cli_profile_free(p);
    return err;
}
