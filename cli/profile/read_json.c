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
#include "cli/util/json_value.h"
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
    const json_t *root;         /* jansson's tree of the whole file */
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

/* Optional unsigned member: absent or null leaves *out; present but not a
 * non-negative integer is an error. */
static int opt_u64(struct jr *r, const json_t *o, const char *k, uint64_t *out,
                   const char *where)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_u64(n, out))
        return bad(r, "%s: \"%s\" is not a non-negative integer", where, k);
    return 0;
}

/* Longer than any profiling session (about 31 years): a file that says
 * more is corrupt, and the writers turn seconds into nanoseconds. */
#define MAX_SECONDS 1e9

static int opt_double(struct jr *r, const json_t *o, const char *k, double *out,
                      const char *where)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    /* Finite, and no more than a 64-bit count: writers convert these to
     * integers (durations to nanoseconds, below). */
    if (!cli_json_value_double(n, out) || !(*out >= 0 && *out <= 18446744073709551615.0))
        return bad(r, "%s: \"%s\" is not a non-negative number", where, k);
    return 0;
}

static int req_double(struct jr *r, const json_t *o, const char *k, double *out,
                      const char *where)
{
    if (!json_object_get(o, k))
        return bad(r, "%s: no \"%s\"", where, k);
    return opt_double(r, o, k, out, where);
}

static int opt_int(struct jr *r, const json_t *o, const char *k, int64_t lo, int64_t hi,
                   int64_t *out, const char *where)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_i64(n, out) || *out < lo || *out > hi)
        return bad(r, "%s: \"%s\" is not an integer in range", where, k);
    return 0;
}

/* An optional member n, which must be an array or an object: 0 when it
 * is absent or null (nothing to read), 1 when it has type t, else the
 * error "\"name\" is not an array" (or an object). */
static int present(struct jr *r, const json_t *n, json_type t, const char *name)
{
    if (!n || json_is_null(n))
        return 0;
    if (json_typeof(n) != t)
        return bad(r, "\"%s\" is not %s", name, t == JSON_ARRAY ? "an array" : "an object");
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
static int opt_strdup(struct jr *r, const json_t *o, const char *k, char **out,
                      const char *where)
{
    const json_t *n = json_object_get(o, k);
    *out = NULL;
    if (!n || json_is_null(n))
        return 0;
    const char *s = json_string_value(n);
    if (!s)
        return bad(r, "%s: \"%s\" is not a string", where, k);
    if (!s[0])
        return 0;
    if (!(*out = strdup(s)))
        return -ENOMEM;
    return 0;
}

/* opt_strdup for a version 2 table frame: the pool's copy. */
static int opt_intern(struct jr *r, const json_t *o, const char *k, char **out, const char *where)
{
    const json_t *n = json_object_get(o, k);
    *out = NULL;
    if (!n || json_is_null(n))
        return 0;
    const char *s = json_string_value(n);
    if (!s)
        return bad(r, "%s: \"%s\" is not a string", where, k);
    if (!s[0])
        return 0;
    if (!(*out = (char *)cli_intern_str(r->strings, s)))
        return -ENOMEM;
    return 0;
}

static int read_frame(struct jr *r, const json_t *fn, struct cli_frame *f, const char *where)
{
    const json_t *n;
    int64_t line = 0;
    int err;
    int (*str)(struct jr *, const json_t *, const char *, char **, const char *) =
        r->strings ? opt_intern : opt_strdup;
    if (!json_is_object(fn))
        return bad(r, "%s: a frame is not an object", where);
    if (!parse_hex(json_string_value(json_object_get(fn, "addr")), &f->addr))
        return bad(r, "%s: frame without a hex \"addr\"", where);
    n = json_object_get(fn, "module_offset");
    if (n && !json_is_null(n) && !parse_hex(json_string_value(n), &f->module_offset))
        return bad(r, "%s: frame \"module_offset\" is not hex", where);
    if ((err = str(r, fn, "function", &f->function, where)) ||
        (err = str(r, fn, "module", &f->module, where)) ||
        (err = str(r, fn, "file", &f->file, where)) ||
        (err = opt_int(r, fn, "line", 0, INT32_MAX, &line, where)))
        return err;
    f->line = (int)line;
    n = json_object_get(fn, "inlined");
    if (n && !json_is_boolean(n) && !json_is_null(n))
        return bad(r, "%s: frame \"inlined\" is not a boolean", where);
    f->inlined = n && json_is_true(n);
    n = json_object_get(fn, "runtime"); /* absent: native; a runtime not known is kept as native */
    const char *rt = n && !json_is_null(n) ? json_string_value(n) : NULL;
    if (n && !json_is_null(n) && !rt)
        return bad(r, "%s: frame \"runtime\" is not a string", where);
    f->runtime = rt && !strcmp(rt, "python") ? HI_FRAME_PYTHON : HI_FRAME_NATIVE;
    return 0;
}

static int read_growth(struct jr *r, const json_t *arr, struct cli_stack *s, const char *where)
{
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > HI_GROWTH_POINTS)
        return bad(r, "%s: \"growth\" is not an array of at most %u numbers", where, HI_GROWTH_POINTS);
    /* A full array is taken as it is; a shorter one (the "growing" ranking
     * lists valid points only) holds the most recent points: align it to
     * the end. */
    size_t k = HI_GROWTH_POINTS - json_array_size(arr);
    size_t at;
    const json_t *g;
    json_array_foreach(arr, at, g)
        if (!cli_json_value_i64(g, &s->growth[k + at]))
            return bad(r, "%s: \"growth\" holds a non-integer", where);
    return 0;
}

static int read_stack(struct jr *r, const json_t *sn, struct cli_stack *s, size_t idx)
{
    char where[48];
    int err;
    snprintf(where, sizeof(where), "stack %zu", idx);
    s->bucket = (uint32_t)idx; /* what a tick's "top" names */
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        s->growth[g] = -1;
    if (!json_is_object(sn))
        return bad(r, "%s is not an object", where);
    if ((err = req_double(r, sn, "live_bytes", &s->live_bytes, where)) ||
        (err = req_double(r, sn, "live_objects", &s->live_objects, where)) ||
        (err = req_double(r, sn, "alloc_bytes", &s->alloc_bytes, where)) ||
        (err = req_double(r, sn, "alloc_objects", &s->alloc_objects, where)))
        return err;
    const json_t *raw = json_object_get(sn, "sampled");
    if (raw && !json_is_object(raw) && !json_is_null(raw))
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
        (err = read_growth(r, json_object_get(sn, "growth"), s, where)))
        return err;
    s->first_tid = (int32_t)tid;
    s->pid = (int32_t)pid;
    const json_t *kn = json_object_get(sn, "kind"); /* absent before issue 14: malloc */
    if (kn && !json_is_null(kn)) {
        int kind = json_is_string(kn) ? cli_profile_kind_by_name(json_string_value(kn)) : -1;
        if (kind < 0)
            return bad(r, "%s: \"kind\" is not \"malloc\", \"mmap\" or \"pymalloc\"", where);
        s->kind = (uint32_t)kind;
    }

    const json_t *frames = json_object_get(sn, "frames");
    if (!frames || !json_is_array(frames))
        return bad(r, "%s: no \"frames\" array", where);
    if (json_array_size(frames) > UINT32_MAX / 2 || json_array_size(frames) > MAX_FRAMES_IN_ALL - r->frames_in_all)
        return bad(r, "%s: too many frames (more than %u in all)", where, MAX_FRAMES_IN_ALL);
    r->frames_in_all += json_array_size(frames);
    s->frames = calloc(json_array_size(frames) ? json_array_size(frames) : 1, sizeof(*s->frames));
    if (!s->frames)
        return -ENOMEM;
    s->shared_strings = r->version >= 2; /* the table's strings: the pool's */
    bool named = false;
    size_t f_at;
    const json_t *f;
    json_array_foreach(frames, f_at, f) {
        struct cli_frame *cf = &s->frames[s->nframes++];
        if (r->version >= 2) {
            uint64_t id;
            if (!cli_json_value_u64(f, &id) || id >= r->ntable)
                return bad(r, "%s: \"frames\" holds %s (the table has %zu frames)", where,
                           json_is_number(f) ? "an index past the \"frames\" table" : "a non-index",
                           r->ntable);
            *cf = r->table[id];
        } else if ((err = read_frame(r, f, cf, where))) {
            return err;
        }
        named |= cf->function || cf->module;
    }

    /* PCs: given, else one per physical frame. */
    const json_t *pcs = json_object_get(sn, "pcs");
    if (pcs && json_is_array(pcs)) {
        if (json_array_size(pcs) > UINT32_MAX / 2)
            return bad(r, "%s: too many pcs", where);
        s->pcs = calloc(json_array_size(pcs) ? json_array_size(pcs) : 1, sizeof(*s->pcs));
        if (!s->pcs)
            return -ENOMEM;
        size_t pc_at;
        const json_t *pc;
        json_array_foreach(pcs, pc_at, pc)
            if (!parse_hex(json_string_value(pc), &s->pcs[s->npcs++]))
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

static int read_totals(struct jr *r, const json_t *t, struct hi_totals *o)
{
    static const char where[] = "totals";
    int has = present(r, t, JSON_OBJECT, "totals");
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
static int read_mmap(struct jr *r, const json_t *m, struct cli_profile *p)
{
    const char *where = "\"mmap\"";
    int has = present(r, m, JSON_OBJECT, "mmap");
    if (has <= 0)
        return has;
    if (!json_object_get(m, "map_calls"))
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

/* "pymalloc": whether CPython's allocator was sampled (the estimates are
 * the stacks' sums); absent from profiles of processes without Python. */
static int read_pymalloc(struct jr *r, const json_t *m, struct cli_profile *p)
{
    const char *where = "\"pymalloc\"";
    int has = present(r, m, JSON_OBJECT, "pymalloc");
    if (has <= 0)
        return has;
    /* Without "status" (a report of several processes has the sums only)
     * there is nothing more to read: the stacks hold the figures. */
    if (!json_object_get(m, "status"))
        return 0;
    int64_t status = 0, minor = 0;
    int err;
    if ((err = opt_int(r, m, "status", -4096, 1, &status, where)) ||
        (err = opt_int(r, m, "python_minor", 0, 255, &minor, where)))
        return err;
    const json_t *w = json_object_get(m, "why");
    const char *why = json_is_string(w) ? json_string_value(w) : NULL;
    memset(&p->pymalloc, 0, sizeof(p->pymalloc));
    p->pymalloc.status = (int32_t)status;
    p->pymalloc.minor = (uint32_t)minor;
    snprintf(p->pymalloc.why, sizeof(p->pymalloc.why), "%s", why ? why : "");
    p->have_pymalloc = true;
    return 0;
}

/* "stack_walks": how the stack walks went (absent from older profiles). */
static int read_walks(struct jr *r, const json_t *w, struct cli_profile *p)
{
    const char *where = "\"stack_walks\"";
    int has = present(r, w, JSON_OBJECT, "stack_walks");
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

/* "python": the target's Python frames (absent: not Python, or older). */
static int read_python(struct jr *r, const json_t *o, struct cli_profile *p)
{
    const char *where = "\"python\"";
    int has = present(r, o, JSON_OBJECT, "python");
    if (has <= 0)
        return has;
    struct hi_snap_python *st = &p->python.st;
    const json_t *n = json_object_get(o, "frames");
    if (!json_is_boolean(n))
        return bad(r, "%s: \"frames\" is not a boolean", where);
    st->state = json_is_true(n) ? HI_PYTHON_READ : HI_PYTHON_UNREAD;
    const char *v = json_string_value(json_object_get(o, "version"));
    unsigned minor = 0;
    if (v && sscanf(v, "3.%u", &minor) != 1)
        return bad(r, "%s: \"version\" is not 3.N", where);
    st->minor = minor;
    const char *why = json_string_value(json_object_get(o, "why_not"));
    if (why)
        snprintf(st->why, sizeof(st->why), "%s", why);
    int err;
    uint64_t w = 0, ns = 0, nv = 0, up = 0, un = 0, co = 0, cu = 0, si = 0; /* locals: the wire struct may be packed */
    if ((err = opt_u64(r, o, "samples_with_frames", &w, where)) ||
        (err = opt_u64(r, o, "samples_no_python_state", &ns, where)) ||
        (err = opt_u64(r, o, "samples_chain_dropped", &nv, where)) ||
        (err = opt_u64(r, o, "samples_no_eval_frame", &up, where)) ||
        (err = opt_u64(r, o, "unnamed_frames", &un, where)) || (err = opt_u64(r, o, "codes", &co, where)) ||
        (err = opt_u64(r, o, "samples_cut", &cu, where)) ||
        (err = opt_u64(r, o, "samples_subinterpreter", &si, where)))
        return err;
    st->cut = cu;
    st->subinterp = si;
    st->with_frames = w;
    st->no_state = ns;
    st->not_valid = nv;
    st->unplaced = up;
    st->unnamed = un;
    st->codes = co;
    p->python.have = true;
    return 0;
}

static int read_threads(struct jr *r, const json_t *a, struct cli_profile *p)
{
    int has = present(r, a, JSON_ARRAY, "threads");
    if (has <= 0)
        return has;
    p->threads = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*p->threads));
    if (!p->threads)
        return -ENOMEM;
    size_t t_at;
    const json_t *t;
    json_array_foreach(a, t_at, t) {
        struct cli_thread *th = &p->threads[p->nthreads++];
        char where[32];
        int64_t tid = 0;
        int err;
        snprintf(where, sizeof(where), "thread %zu", p->nthreads - 1);
        if (!json_is_object(t))
            return bad(r, "%s is not an object", where);
        if ((err = opt_int(r, t, "tid", INT32_MIN, INT32_MAX, &tid, where)) ||
            (err = opt_u64(r, t, "alloc_bytes", &th->alloc_bytes, where)) ||
            (err = opt_u64(r, t, "alloc_calls", &th->alloc_calls, where)) ||
            (err = opt_u64(r, t, "free_bytes", &th->free_bytes, where)) ||
            (err = opt_u64(r, t, "free_calls", &th->free_calls, where)))
            return err;
        th->tid = (int32_t)tid;
        const char *name = json_string_value(json_object_get(t, "name"));
        if (name)
            snprintf(th->name, sizeof(th->name), "%s", name);
        const json_t *alive = json_object_get(t, "alive");
        th->alive = alive && json_is_boolean(alive) && json_is_true(alive);
    }
    return 0;
}

static int read_histogram(struct jr *r, const json_t *a, struct cli_profile *p)
{
    int has = present(r, a, JSON_ARRAY, "histogram");
    if (has <= 0)
        return has;
    size_t h_at;
    const json_t *h;
    json_array_foreach(a, h_at, h) {
        uint64_t min = 0, calls = 0, bytes = 0;
        int err;
        if (!json_is_object(h))
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

/* A tick's "top" (absent before issue 30): [stack, grew, live] each, the
 * stack an index into "stacks" (read before the ticks). */
static int read_tick_top(struct jr *r, const json_t *a, struct cli_tick *tk, size_t nstacks)
{
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > HI_TICK_TOP)
        return bad(r, "tick: \"top\" is not an array of at most %u", HI_TICK_TOP);
    size_t k;
    const json_t *e;
    json_array_foreach(a, k, e) {
        const json_t *s = json_array_get(e, 0), *g = json_array_get(e, 1), *l = json_array_get(e, 2);
        if (!json_is_array(e) || json_array_size(e) != 3 || !json_is_integer(s) || !json_is_integer(g) ||
            !json_is_integer(l) || json_integer_value(s) < 0 || (size_t)json_integer_value(s) >= nstacks ||
            json_integer_value(l) < 0)
            return bad(r, "tick: \"top\" holds an entry that is not [stack, grew, live]");
        tk->top_bucket[k] = (uint32_t)json_integer_value(s);
        tk->top_grew[k] = json_integer_value(g);
        tk->top_live[k] = (uint64_t)json_integer_value(l);
    }
    tk->ntop = (uint32_t)json_array_size(a);
    return 0;
}

/* A tick's "kept" (absent before): [stack, live] each, as "top". */
static int read_tick_kept(struct jr *r, const json_t *a, struct cli_tick *tk, size_t nstacks)
{
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > HI_TICK_KEPT)
        return bad(r, "tick: \"kept\" is not an array of at most %u", HI_TICK_KEPT);
    size_t k;
    const json_t *e;
    json_array_foreach(a, k, e) {
        const json_t *s = json_array_get(e, 0), *l = json_array_get(e, 1);
        if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(s) || !json_is_integer(l) ||
            json_integer_value(s) < 0 || (size_t)json_integer_value(s) >= nstacks || json_integer_value(l) < 0)
            return bad(r, "tick: \"kept\" holds an entry that is not [stack, live]");
        tk->kept_bucket[k] = (uint32_t)json_integer_value(s);
        tk->kept_live[k] = (uint64_t)json_integer_value(l);
    }
    tk->nkept = (uint32_t)json_array_size(a);
    return 0;
}

static int read_ticks(struct jr *r, const json_t *a, struct cli_profile *p)
{
    int has = present(r, a, JSON_ARRAY, "ticks");
    if (has <= 0)
        return has;
    p->ticks = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*p->ticks));
    if (!p->ticks)
        return -ENOMEM;
    size_t t_at;
    const json_t *t;
    json_array_foreach(a, t_at, t) {
        struct cli_tick *tk = &p->ticks[p->nticks++];
        int err;
        if (!json_is_object(t))
            return bad(r, "a tick is not an object");
        if ((err = opt_double(r, t, "t_s", &tk->t_s, "tick")) ||
            (err = opt_u64(r, t, "live_bytes", &tk->live_bytes, "tick")) ||
            (err = opt_u64(r, t, "alloc_bytes", &tk->alloc_bytes, "tick")) ||
            (err = opt_u64(r, t, "rss_bytes", &tk->rss_bytes, "tick")))
            return err;
        if (tk->t_s > MAX_SECONDS)
            return bad(r, "tick: \"t_s\" %g is not a plausible time", tk->t_s);
        int64_t pid = 0; /* a profile of several: whose tick (its top's stacks are that process's) */
        if ((err = opt_int(r, t, "pid", 0, INT32_MAX, &pid, "tick")))
            return err;
        tk->pid = (int32_t)pid;
        if ((err = read_tick_top(r, json_object_get(t, "top"), tk, p->nstacks)) ||
            (err = read_tick_kept(r, json_object_get(t, "kept"), tk, p->nstacks)))
            return err;
    }
    return 0;
}

static int read_growing(struct jr *r, const json_t *a, struct cli_profile *p)
{
    if (!a || !json_is_array(a))
        return 0;
    size_t g_at;
    const json_t *g;
    json_array_foreach(a, g_at, g) {
        uint64_t idx;
        if (!cli_json_value_u64(json_object_get(g, "stack"), &idx) || idx >= p->nstacks)
            return bad(r, "\"growing\" refers to a stack that does not exist");
        /* The stack's own "growth" (all points, in place) wins. */
        bool have = false;
        for (unsigned k = 0; k < HI_GROWTH_POINTS; k++)
            have |= p->stacks[idx].growth[k] >= 0;
        if (have)
            continue;
        int err = read_growth(r, json_object_get(g, "growth"), &p->stacks[idx], "growing");
        if (err)
            return err;
    }
    return 0;
}

/* Version 2's "frames": each distinct frame once. */
static int read_frame_table(struct jr *r, const json_t *a, struct cli_profile *p)
{
    if (!a || !json_is_array(a))
        return bad(r, "no \"frames\" table (schema version 2)");
    if (json_array_size(a) > MAX_FRAMES_IN_ALL)
        return bad(r, "\"frames\": more than %u frames", MAX_FRAMES_IN_ALL);
    if (!(p->strings = cli_intern_new()))
        return -ENOMEM;
    r->strings = p->strings;
    r->table = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*r->table));
    if (!r->table)
        return -ENOMEM;
    size_t f_at;
    const json_t *f;
    json_array_foreach(a, f_at, f) {
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
static int read_target_exit(struct jr *r, const json_t *x, struct cli_profile *p)
{
    int has = present(r, x, JSON_OBJECT, "target_exit");
    if (has <= 0)
        return has;
    struct cli_target_exit *e = &p->exit;
    int64_t sig = 0, code = 0;
    const json_t *sn = json_object_get(x, "signal"), *cn = json_object_get(x, "exit_code");
    const json_t *st = json_object_get(x, "stacks");
    int err;
    if ((err = opt_double(r, x, "as_of_s_before", &e->as_of_s_before, "target_exit")) ||
        (err = opt_int(r, x, "signal", 0, 128, &sig, "target_exit")) ||
        (err = opt_int(r, x, "exit_code", 0, 255, &code, "target_exit")))
        return err;
    if (e->as_of_s_before < 0 || e->as_of_s_before > MAX_SECONDS)
        return bad(r, "target_exit: \"as_of_s_before\" %g is not plausible", e->as_of_s_before);
    e->stacks = !st || !json_is_boolean(st) || json_is_true(st);
    e->status_known = (sn && !json_is_null(sn)) || (cn && !json_is_null(cn));
    e->signal = (int)sig;
    e->exit_code = (int)code;
    const char *snap = json_string_value(json_object_get(x, "snapshot"));
    if (snap && !strcmp(snap, "signal")) {
        int64_t ps = 0, pc = 0;
        if ((err = opt_int(r, x, "snapshot_signal", 0, 128, &ps, "target_exit")) ||
            (err = opt_int(r, x, "snapshot_si_code", INT32_MIN, INT32_MAX, &pc, "target_exit")))
            return err;
        e->pushed = 1;
        e->push_signal = (int)ps;
        e->push_si_code = (int)pc;
    } else if (snap && !strcmp(snap, "pressure")) {
        const json_t *pr = json_object_get(x, "pressure");
        if (!pr || !json_is_object(pr))
            return bad(r, "target_exit: \"snapshot\": \"pressure\" without a \"pressure\" object");
        const char *m = json_string_value(json_object_get(pr, "measure"));
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
static int read_debug_hints(struct jr *r, const json_t *a, struct cli_profile *p)
{
    int has = present(r, a, JSON_ARRAY, "debuginfo_missing");
    if (has <= 0)
        return has;
    if (!json_array_size(a))
        return 0;
    if (!(p->debug_hints = calloc(json_array_size(a), sizeof(*p->debug_hints))))
        return -ENOMEM;
    size_t h_at;
    const json_t *h;
    json_array_foreach(a, h_at, h) {
        struct cli_debug_hint *d = &p->debug_hints[p->ndebug_hints];
        int err;
        if (!json_is_object(h))
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
    const json_t *root = r->root;
    int err;
    if (!json_is_object(root))
        return bad(r, "JSON, but not an object");
    const json_t *census = json_object_get(root, "census");
    if (!json_object_get(root, "schema") && census) { /* `heapinject census --format json` */
        int64_t pid = 0;
        if ((err = opt_int(r, root, "pid", 0, INT32_MAX, &pid, "census")) ||
            (err = cli_census_from_json(census, (int32_t)pid, &p->census, r->why, r->whylen)))
            return err;
        p->pid = (int32_t)pid;
        p->census_only = true;
        return 0;
    }
    const char *schema = json_string_value(json_object_get(root, "schema"));
    if (!schema || strcmp(schema, SCHEMA_NAME))
        return bad(r, "JSON without \"schema\": \"%s\"", SCHEMA_NAME);
    uint64_t version = 0;
    if (!cli_json_value_u64(json_object_get(root, "version"), &version))
        return bad(r, "no schema \"version\"");
    if (version < SCHEMA_VERSION_OLDEST || version > SCHEMA_VERSION)
        return bad(r, "schema version %" PRIu64 "; this heapinject reads versions %d to %d", version,
                   SCHEMA_VERSION_OLDEST, SCHEMA_VERSION);
    r->version = version;
    if (version >= 2 && (err = read_frame_table(r, json_object_get(root, "frames"), p)))
        return err;

    int64_t pid = 0, tick_ms = 0;
    if ((err = opt_int(r, root, "pid", 0, INT32_MAX, &pid, "profile")) ||
        (err = opt_u64(r, root, "rate", &p->rate, "profile")) ||
        (err = opt_double(r, root, "duration_s", &p->duration_s, "profile")) ||
        (err = opt_int(r, root, "tick_ms", 0, UINT32_MAX, &tick_ms, "profile")) ||
        (err = opt_u64(r, root, "rss_bytes", &p->rss_bytes, "profile")) ||
        (err = opt_u64(r, root, "attach_ns", &p->attach_ns, "profile")) ||
        (err = opt_u64(r, root, "snapshot_ns", &p->snapshot_ns, "profile")) ||
        (err = read_totals(r, json_object_get(root, "totals"), &p->totals)) ||
        (err = read_mmap(r, json_object_get(root, "mmap"), p)) ||
        (err = read_pymalloc(r, json_object_get(root, "pymalloc"), p)) ||
        (err = read_walks(r, json_object_get(root, "stack_walks"), p)) ||
        (err = read_python(r, json_object_get(root, "python"), p)))
        return err;
    if (p->duration_s > MAX_SECONDS)
        return bad(r, "profile: \"duration_s\" %g is not a plausible duration", p->duration_s);
    p->pid = (int32_t)pid;
    p->tick_ms = (uint32_t)tick_ms;
    if ((err = cli_memory_from_json(json_object_get(root, "memory"), &p->memory, r->why, r->whylen)))
        return err;

    const json_t *stacks = json_object_get(root, "stacks");
    if (!stacks || !json_is_array(stacks))
        return bad(r, "no \"stacks\" array");
    p->stacks = calloc(json_array_size(stacks) ? json_array_size(stacks) : 1, sizeof(*p->stacks));
    if (!p->stacks)
        return -ENOMEM;
    size_t s_at;
    const json_t *s;
    json_array_foreach(stacks, s_at, s) {
        p->nstacks++;
        if ((err = read_stack(r, s, &p->stacks[p->nstacks - 1], p->nstacks - 1)))
            return err;
    }
    if ((err = read_threads(r, json_object_get(root, "threads"), p)) ||
        (err = read_histogram(r, json_object_get(root, "histogram"), p)) ||
        (err = read_ticks(r, json_object_get(root, "ticks"), p)) ||
        (err = read_growing(r, json_object_get(root, "growing"), p)))
        return err;

    if ((err = opt_strdup(r, root, "note", &p->note, "profile")) ||
        (err = read_target_exit(r, json_object_get(root, "target_exit"), p)) ||
        (err = read_debug_hints(r, json_object_get(root, "debuginfo_missing"), p)) ||
        (err = cli_profile_read_processes(json_object_get(root, "processes"), p, r->why, r->whylen)))
        return err;

    if (census && !json_is_null(census) &&
        (err = cli_census_from_json(census, p->pid, &p->census, r->why, r->whylen)))
        return err;

    const json_t *maps = json_object_get(root, "maps");
    if (maps && !json_is_null(maps)) {
        if (!json_is_string(maps))
            return bad(r, "\"maps\" is not a string");
        if (!(p->maps = strdup(json_string_value(maps))))
            return -ENOMEM;
        p->maps_len = strlen(p->maps);
    }
    return 0;
}

int cli_profile_read_json(const char *text, size_t len, struct cli_profile *p, char *why,
                          size_t whylen)
{
    json_t *tree;
    int err;

    memset(p, 0, sizeof(*p));
    err = cli_json_value_parse(text, len, &tree, why, whylen);
    struct jr r = { tree, why, whylen, 0, 0, NULL, 0, NULL };
    if (!err)
        err = read_doc(&r, p);
    free(r.table); /* its strings are the profile's pool's */
    json_decref(tree);
    if (err)
        cli_profile_free(p);
    return err;
}
