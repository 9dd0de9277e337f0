/* read_census.c - a census read back from its JSON (docs/JSON.md
 * "Census"): the file `heapinject census --format json` writes, or the
 * "census" object of a profile taken with --census. `heapinject report`
 * renders it again: the summary, the views as they were written (their
 * first rows, up to the writer's --top, and how many there were in all)
 * and the roots. The groups themselves are not in the file, so the views
 * are kept as rows (struct cli_census_saved). */
#include "cli/profile/read_census.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/census/views.h"
#include "cli/profile/read.h"
#include "cli/profile/read_census_python.h"
#include "common/hexdigit.h"

/* Rows and roots beyond this are refused: the writer's --top bounds them. */
#define MAX_ROWS (1u << 20)

struct rc {
    char *why;
    size_t whylen;
};

/* Optional unsigned member: absent or null leaves *out. */
static int u64(struct rc *r, const json_t *o, const char *k, uint64_t *out)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_u64(n, out))
        return cli_profile_read_bad(r->why, r->whylen, "census: \"%s\" is not a non-negative integer", k);
    return 0;
}

static int u32(struct rc *r, const json_t *o, const char *k, uint32_t *out)
{
    uint64_t v = *out;
    int err = u64(r, o, k, &v);
    if (!err && v > UINT32_MAX)
        return cli_profile_read_bad(r->why, r->whylen, "census: \"%s\" is out of range", k);
    *out = (uint32_t)v;
    return err;
}

static int num(struct rc *r, const json_t *o, const char *k, double *out)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_double(n, out) || !(*out >= 0 && *out <= 1e18))
        return cli_profile_read_bad(r->why, r->whylen, "census: \"%s\" is not a non-negative number", k);
    return 0;
}

/* Optional string member into buf (truncated to fit). */
static int str_into(struct rc *r, const json_t *o, const char *k, char *buf, size_t len)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!json_is_string(n))
        return cli_profile_read_bad(r->why, r->whylen, "census: \"%s\" is not a string", k);
    snprintf(buf, len, "%s", json_string_value(n));
    return 0;
}

/* Optional string member, copied (NULL when absent or null). */
static int str_dup(struct rc *r, const json_t *o, const char *k, char **out)
{
    const json_t *n = json_object_get(o, k);
    *out = NULL;
    if (!n || json_is_null(n))
        return 0;
    if (!json_is_string(n))
        return cli_profile_read_bad(r->why, r->whylen, "census: \"%s\" is not a string", k);
    return (*out = strdup(json_string_value(n))) ? 0 : -ENOMEM;
}

static int preview(struct rc *r, const json_t *o, struct cli_census_row *x)
{
    const char *s = json_string_value(json_object_get(o, "preview"));
    if (!s || !s[0])
        return 0;
    size_t len = strlen(s);
    if (len % 2 || len / 2 > HI_CENSUS_PREVIEW)
        return cli_profile_read_bad(r->why, r->whylen, "census: a \"preview\" is not up to %d bytes in hex",
                                    HI_CENSUS_PREVIEW);
    uint8_t *p = malloc(len / 2);
    if (!p)
        return -ENOMEM;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hi_hexval(s[2 * i]), lo = hi_hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(p);
            return cli_profile_read_bad(r->why, r->whylen, "census: a \"preview\" is not hex");
        }
        p[i] = (uint8_t)(hi * 16 + lo);
    }
    x->preview = p;
    x->preview_len = len / 2;
    return 0;
}

/* One view's rows, as json.c's view() writes them. */
static int rows(struct rc *r, const json_t *arr, enum cli_census_view v, struct cli_census_saved *s)
{
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > MAX_ROWS)
        return cli_profile_read_bad(r->why, r->whylen, "census: a view is not an array of rows");
    s->rows[v] = calloc(json_array_size(arr) + 1, sizeof(struct cli_census_row));
    if (!s->rows[v])
        return -ENOMEM;
    size_t o_at;
    const json_t *o;
    json_array_foreach(arr, o_at, o) {
        if (!json_is_object(o))
            return cli_profile_read_bad(r->why, r->whylen, "census: a row is not an object");
        struct cli_census_row *x = &s->rows[v][s->n[v]++];
        char *type = NULL, *stack = NULL;
        int err = str_dup(r, o, "type", &type);
        x->type = type;
        if (err || (err = str_dup(r, o, "since_attach_stack", &stack)))
            return err;
        x->since_attach_stack = stack;
        if ((err = u64(r, o, "size", &x->size)) || (err = preview(r, o, x)))
            return err;
        if (v == CLI_CENSUS_UNREACHABLE) {
            if ((err = u64(r, o, "blocks", &x->unreachable_blocks)) || (err = u64(r, o, "bytes", &x->unreachable_bytes)))
                return err;
            continue;
        }
        if ((err = u64(r, o, "blocks", &x->blocks)) || (err = u64(r, o, "bytes", &x->bytes)) ||
            (err = u64(r, o, "unreachable_blocks", &x->unreachable_blocks)) ||
            (err = u64(r, o, "unreachable_bytes", &x->unreachable_bytes)) ||
            (err = u64(r, o, "since_attach_blocks", &x->since_attach_blocks)) ||
            (err = u64(r, o, "since_attach_bytes", &x->since_attach_bytes)) ||
            (err = u64(r, o, "since_attach_stack_bytes", &x->since_attach_stack_bytes)))
            return err;
        if (v == CLI_CENSUS_BY_SIZE && !x->unreachable_bytes)
            x->unreachable_bytes = x->unreachable_blocks * x->size;
    }
    s->total[v] = s->n[v];
    return 0;
}

static uint32_t root_kind(const char *k)
{
    static const struct { const char *name; uint32_t kind; } kinds[] = {
        { "global", HI_ROOT_GLOBAL }, { "stack", HI_ROOT_STACK },       { "tls", HI_ROOT_TLS },
        { "register", HI_ROOT_REGISTER }, { "uncopied", HI_ROOT_UNCOPIED }, { "kernel", HI_ROOT_KERNEL },
        { "shared", HI_ROOT_SHARED },
    };
    for (size_t i = 0; k && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(k, kinds[i].name))
            return kinds[i].kind;
    return HI_ROOT_MAPPING;
}

static int roots(struct rc *r, const json_t *arr, struct cli_census *c)
{
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > MAX_ROWS)
        return cli_profile_read_bad(r->why, r->whylen, "census: \"roots\" is not an array");
    size_t n = json_array_size(arr) + 1;
    c->roots = calloc(n, sizeof(*c->roots));
    c->root_name = calloc(n, sizeof(char *));
    c->root_via = calloc(n, sizeof(char *));
    if (!c->roots || !c->root_name || !c->root_via)
        return -ENOMEM;
    c->cap_roots = n;
    size_t o_at;
    const json_t *o;
    json_array_foreach(arr, o_at, o) {
        if (!json_is_object(o))
            return cli_profile_read_bad(r->why, r->whylen, "census: a root is not an object");
        size_t i = c->nroots++;
        struct hi_census_root *x = &c->roots[i];
        uint64_t tid = 0;
        int err;
        if ((err = str_dup(r, o, "name", &c->root_name[i])) || (err = str_dup(r, o, "via", &c->root_via[i])) ||
            (err = u64(r, o, "address", &x->addr)) || (err = u64(r, o, "retained_bytes", &x->retained_bytes)) ||
            (err = u64(r, o, "retained_blocks", &x->retained_blocks)) || (err = u64(r, o, "via_size", &x->via_size)) ||
            (err = u64(r, o, "tid", &tid)) || (err = str_into(r, o, "thread", x->thread, sizeof(x->thread))))
            return err;
        x->kind = root_kind(json_string_value(json_object_get(o, "kind")));
        x->tid = (int32_t)tid;
    }
    return 0;
}

/* The "rows_total" object: how many rows each view had in all. */
static int totals(struct rc *r, const json_t *o, struct cli_census_saved *s)
{
    uint64_t t[4] = { s->total[CLI_CENSUS_UNREACHABLE], s->total[CLI_CENSUS_BY_TYPE], s->total[CLI_CENSUS_BY_SIZE],
                      s->roots_total };
    int err;
    if (!o || json_is_null(o))
        return 0;
    if ((err = u64(r, o, "unreachable", &t[0])) || (err = u64(r, o, "types", &t[1])) ||
        (err = u64(r, o, "sizes", &t[2])) || (err = u64(r, o, "roots", &t[3])))
        return err;
    s->total[CLI_CENSUS_UNREACHABLE] = t[0] > s->total[CLI_CENSUS_UNREACHABLE] ? t[0] : s->total[CLI_CENSUS_UNREACHABLE];
    s->total[CLI_CENSUS_BY_TYPE] = t[1] > s->total[CLI_CENSUS_BY_TYPE] ? t[1] : s->total[CLI_CENSUS_BY_TYPE];
    s->total[CLI_CENSUS_BY_SIZE] = t[2] > s->total[CLI_CENSUS_BY_SIZE] ? t[2] : s->total[CLI_CENSUS_BY_SIZE];
    s->roots_total = t[3] > s->roots_total ? t[3] : s->roots_total;
    return 0;
}

static int read_body(struct rc *r, const json_t *b, struct cli_census *c)
{
    struct hi_census_end *e = &c->end;
    if (!json_is_object(b))
        return cli_profile_read_bad(r->why, r->whylen, "\"census\" is not an object");
    const char *alloc = json_string_value(json_object_get(b, "allocator"));
    if (!alloc || strcmp(alloc, "glibc"))
        return cli_profile_read_bad(r->why, r->whylen, "census: no \"allocator\": \"glibc\"");
    c->saved = calloc(1, sizeof(*c->saved));
    if (!c->saved)
        return -ENOMEM;
    const json_t *in_use = json_object_get(b, "in_use"), *fr = json_object_get(b, "free"),
                 *mm = json_object_get(b, "mmapped"), *lay = json_object_get(b, "layout"),
                 *mi = json_object_get(b, "glibc_mallinfo"), *unr = json_object_get(b, "unreachable");
    double fork_ms = 0, scan_ms = 0, held_ns = -1, wall_ns = -1;
    uint64_t untouched = 0, uncopied = 0, unread = 0, fork_ns = 0, scan_ns = 0;
    int err;
    if ((err = u32(r, b, "arenas", &e->arenas)) || (err = u32(r, b, "heaps", &e->heaps)) ||
        (err = num(r, b, "fork_ms", &fork_ms)) || (err = num(r, b, "threads_held_ms", &c->held_ms)) ||
        (err = num(r, b, "scan_ms", &scan_ms)) || (err = num(r, b, "wall_ms", &c->wall_ms)) ||
        (err = u64(r, in_use, "blocks", &e->in_use_blocks)) || (err = u64(r, in_use, "bytes", &e->in_use_bytes)) ||
        (err = u64(r, fr, "blocks", &e->free_blocks)) || (err = u64(r, fr, "bytes", &e->free_bytes)) ||
        (err = u64(r, fr, "tcache_blocks", &e->tcache_blocks)) || (err = u64(r, fr, "tcache_bytes", &e->tcache_bytes)) ||
        (err = u64(r, fr, "fastbin_blocks", &e->fastbin_blocks)) ||
        (err = u64(r, fr, "fastbin_bytes", &e->fastbin_bytes)) || (err = u64(r, mm, "blocks", &e->mmapped_blocks)) ||
        (err = u64(r, mm, "bytes", &e->mmapped_bytes)) || (err = u64(r, b, "metadata_bytes", &e->metadata_bytes)) ||
        (err = u64(r, b, "heap_bytes", &e->heap_bytes)) || (err = u64(r, b, "root_bytes", &e->root_bytes)) ||
        (err = u64(r, b, "root_untouched_bytes", &untouched)) || (err = u64(r, b, "uncopied_bytes", &uncopied)) ||
        (err = u64(r, b, "uncopied_unread_bytes", &unread)) || (err = u32(r, b, "threads", &e->threads)) ||
        (err = u32(r, b, "threads_with_stack_pointer", &e->threads_with_sp)) ||
        (err = u32(r, b, "threads_with_registers", &e->threads_with_regs)) ||
        (err = u32(r, b, "threads_with_tls", &e->tls_roots)) ||
        (err = str_into(r, lay, "where", c->layout_where, sizeof(c->layout_where))) ||
        (err = u64(r, lay, "main_arena", &c->main_arena)) || (err = u64(r, mi, "free", &e->mallinfo_free)) ||
        (err = u64(r, mi, "mmapped", &e->mallinfo_mmapped)) || (err = u64(r, unr, "blocks", &e->unreachable_blocks)) ||
        (err = u64(r, unr, "bytes", &e->unreachable_bytes)) ||
        (err = rows(r, json_object_get(unr, "groups"), CLI_CENSUS_UNREACHABLE, c->saved)) ||
        (err = rows(r, json_object_get(b, "types"), CLI_CENSUS_BY_TYPE, c->saved)) ||
        (err = rows(r, json_object_get(b, "sizes"), CLI_CENSUS_BY_SIZE, c->saved)) ||
        (err = roots(r, json_object_get(b, "roots"), c)))
        return err;
    c->saved->roots_total = 0; /* the roots that keep blocks: those in the file, or rows_total's */
    c->saved->roots_total = cli_census_roots_held(c);
    /* Written since the census reads back: exact times and what the text
     * says besides (absent from older files: the text then lacks them). */
    if ((err = totals(r, json_object_get(b, "rows_total"), c->saved)) || (err = u64(r, b, "fork_ns", &fork_ns)) ||
        (err = u64(r, b, "scan_ns", &scan_ns)) || (err = num(r, b, "threads_held_ns", &held_ns)) ||
        (err = num(r, b, "wall_ns", &wall_ns)) || (err = u32(r, b, "groups_dropped", &e->groups_dropped)) ||
        (err = u64(r, b, "rss_before_bytes", &c->rss_before)) || (err = u64(r, b, "rss_after_bytes", &c->rss_after)) ||
        (err = str_into(r, b, "registers_not_read_why", c->regs_why, sizeof(c->regs_why))) ||
        (err = str_into(r, b, "comm", c->comm, sizeof(c->comm))) ||
        (err = cli_census_python_from_json(json_object_get(b, "python"), c, r->why, r->whylen)))
        return err;
    e->stall_ns = json_object_get(b, "fork_ns") ? fork_ns : (uint64_t)(fork_ms * 1e6 + 0.5);
    e->scan_ns = json_object_get(b, "scan_ns") ? scan_ns : (uint64_t)(scan_ms * 1e6 + 0.5);
    if (held_ns >= 0)
        c->held_ms = held_ns / 1e6;
    if (wall_ns >= 0)
        c->wall_ms = wall_ns / 1e6;
    e->untouched_mib = (uint32_t)(untouched >> 20);
    e->uncopied_mib = (uint32_t)(uncopied >> 20);
    e->uncopied_missed_mib = (uint32_t)(unread >> 20);
    const char *src = json_string_value(json_object_get(lay, "source"));
    e->layout_from_debuginfo = src && !strcmp(src, "debuginfo");
    /* The copy's cost (null when it was not measured). */
    const json_t *k = json_object_get(b, "copy_cost");
    if (k && !json_is_null(k)) {
        if ((err = u64(r, k, "minor_faults", &c->cost.faults)) || (err = num(r, k, "window_ms", &c->cost.window_ms)) ||
            (err = num(r, k, "usual_faults_per_s", &c->cost.usual_per_s)) ||
            (err = u64(r, k, "copied_bytes_est", &c->cost.copied_est)))
            return err;
        /* The prediction from the census before (null: none to predict from). */
        const json_t *pred = json_object_get(k, "predicted_bytes");
        if (pred && !json_is_null(pred)) {
            if ((err = u64(r, k, "predicted_bytes", &c->cost.predicted)))
                return err;
            c->cost.have_predicted = true;
        }
        c->cost.have = true;
    }
    return 0;
}

int cli_census_from_json(const json_t *body, int32_t pid,
                         struct cli_census **out, char *why, size_t whylen)
{
    struct rc r = { why, whylen };
    struct cli_census *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (!c)
        return -ENOMEM;
    c->pid = pid;
    int err = read_body(&r, body, c);
    if (err) {
        cli_census_free(c);
        free(c);
        return err;
    }
    *out = c;
    return 0;
}
