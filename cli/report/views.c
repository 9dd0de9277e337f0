/* views.c - grouping of stacks by function, module or thread.
 *
 * One pass over the stacks; groups are found through a string-keyed hash
 * table (a profile can hold tens of thousands of distinct functions). */
#include "cli/report/views.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/hindex.h"
#include "cli/profile/merge.h"
#include "cli/symbolize/symbolize.h"
#include "cli/process/paths.h"
#include "cli/report/formats.h"

static const char *const view_names[] = {
    [CLI_VIEW_STACK] = "stack",
    [CLI_VIEW_FUNCTION] = "function",
    [CLI_VIEW_MODULE] = "module",
    [CLI_VIEW_THREAD] = "thread",
    [CLI_VIEW_PROCESS] = "process",
};

int cli_view_parse(const char *name, enum cli_view *v)
{
    for (size_t i = 0; i < sizeof(view_names) / sizeof(view_names[0]); i++) {
        if (name && !strcmp(name, view_names[i])) {
            *v = (enum cli_view)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *cli_view_name(enum cli_view v)
{
    return (size_t)v < sizeof(view_names) / sizeof(view_names[0]) ? view_names[v] : "?";
}

struct builder {
    struct cli_view_result *r;
    size_t cap;
    char **keys;          /* per group, owned */
    size_t *last_stack;   /* per group: last stack counted in cum */
    struct cli_hindex index; /* key -> group */
};

struct group_key {
    const struct builder *b;
    const char *key;
};

static bool group_same(size_t g, const void *ctx)
{
    const struct group_key *k = ctx;
    return !strcmp(k->b->keys[g], k->key);
}

/* The group of key, created with name/module/tid when new. Index, or -ENOMEM. */
static long group_of(struct builder *b, const char *key, const char *name, const char *module, int32_t tid)
{
    uint64_t h = cli_hindex_hash_bytes(key, strlen(key), 0);
    struct group_key gk = { b, key };
    long found = cli_hindex_find(&b->index, h, group_same, &gk);
    if (found >= 0)
        return found;
    if (b->r->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        struct cli_group *ng = realloc(b->r->groups, nc * sizeof(*ng));
        if (!ng)
            return -ENOMEM;
        b->r->groups = ng;
        char **nk = realloc(b->keys, nc * sizeof(*nk));
        if (!nk)
            return -ENOMEM;
        b->keys = nk;
        size_t *nl = realloc(b->last_stack, nc * sizeof(*nl));
        if (!nl)
            return -ENOMEM;
        b->last_stack = nl;
        b->cap = nc;
    }
    size_t g = b->r->n;
    struct cli_group *gr = &b->r->groups[g];
    memset(gr, 0, sizeof(*gr));
    gr->tid = tid;
    b->keys[g] = strdup(key);
    gr->name = strdup(name);
    gr->module = module ? strdup(module) : NULL;
    b->last_stack[g] = SIZE_MAX;
    b->r->n++; /* counted at once so that cli_view_free releases it */
    if (!b->keys[g] || !gr->name || (module && !gr->module) || cli_hindex_add(&b->index, h, g) < 0)
        return -ENOMEM;
    return (long)g;
}

static const char *thread_name(const struct cli_profile *p, int32_t tid, char *buf, size_t len)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid && p->threads[i].name[0])
            return p->threads[i].name;
    snprintf(buf, len, "tid %d", (int)tid);
    return buf;
}

/* Adds stack si to group g: flat when it is the stack's innermost group,
 * cumulative once per stack. */
static void count(struct builder *b, size_t g, size_t si, const struct cli_stack *s, bool flat)
{
    struct cli_group *gr = &b->r->groups[g];
    if (flat) {
        gr->live_bytes += s->live_bytes;
        gr->live_objects += s->live_objects;
        gr->alloc_bytes += s->alloc_bytes;
        gr->alloc_objects += s->alloc_objects;
    }
    if (b->last_stack[g] != si) {
        b->last_stack[g] = si;
        gr->stacks++;
        gr->cum_live_bytes += s->live_bytes;
        gr->cum_live_objects += s->live_objects;
        gr->cum_alloc_bytes += s->alloc_bytes;
        gr->cum_alloc_objects += s->alloc_objects;
    }
}

/* The group of one frame (function or module view). */
static long frame_group(struct builder *b, enum cli_view v, const struct cli_frame *f)
{
    char name[512], sbuf[1024];
    const char *fn;
    /* A Python function's "module" is its file: two functions of one
     * qualname in two files are two groups (issue 29). */
    const char *module = f->runtime == HI_FRAME_PYTHON ? f->file : f->module;
    if (v == CLI_VIEW_MODULE) {
        const char *m = module && module[0] ? module : NULL;
        return group_of(b, m ? m : "", m ? m : "(unknown)", m, 0);
    }
    if (f->function && f->function[0])
        fn = f->function;
    else if (f->module && f->module[0])
        fn = name, snprintf(name, sizeof(name), "%s+0x%" PRIx64, cli_paths_basename(f->module), f->module_offset);
    else
        fn = name, snprintf(name, sizeof(name), "0x%" PRIx64, f->addr);
    /* Same name in two modules (static functions, plugins): two groups.
     * C++ names can be long: the key is never cut short. */
    const char *mod = module ? module : "";
    size_t fl = strlen(fn), ml = strlen(mod);
    char *key = fl + ml + 2 <= sizeof(sbuf) ? sbuf : malloc(fl + ml + 2);
    if (!key)
        return -ENOMEM;
    memcpy(key, fn, fl);
    key[fl] = '\x1f';
    memcpy(key + fl + 1, mod, ml + 1);
    long g = group_of(b, key, fn, module, 0);
    if (key != sbuf)
        free(key);
    return g;
}

static int add_stack(struct builder *b, const struct cli_profile *p, enum cli_view v, size_t si)
{
    const struct cli_stack *s = &p->stacks[si];
    long g;
    if (v == CLI_VIEW_PROCESS) {
        char key[32], nb[64];
        int32_t pid = cli_stack_pid(p, s);
        const struct cli_process *o = cli_profile_process_find(p, pid);
        snprintf(key, sizeof(key), "%d", (int)pid);
        snprintf(nb, sizeof(nb), "pid %d", (int)pid);
        if ((g = group_of(b, key, o && o->comm ? o->comm : nb, o ? o->exe : NULL, 0)) < 0)
            return (int)g;
        b->r->groups[g].pid = pid;
        count(b, (size_t)g, si, s, true);
        return 0;
    }
    if (v == CLI_VIEW_THREAD) {
        char key[32], nb[32];
        snprintf(key, sizeof(key), "%d", (int)s->first_tid);
        if ((g = group_of(b, key, thread_name(p, s->first_tid, nb, sizeof(nb)), NULL, s->first_tid)) < 0)
            return (int)g;
        count(b, (size_t)g, si, s, true);
        return 0;
    }
    bool first = true;
    for (uint32_t i = 0; i < s->nframes; i++) {
        const struct cli_frame *f = &s->frames[i];
        /* Profiles saved by older versions may still hold heapinject's
         * own frames: they are never the code that allocated. */
        if (f->module && cli_paths_is_payload(f->module, strlen(f->module)))
            continue;
        if ((g = frame_group(b, v, f)) < 0)
            return (int)g;
        count(b, (size_t)g, si, s, first);
        first = false;
    }
    if (!first)
        return 0;
    /* Not symbolized (or nothing left): the addresses alone. */
    for (uint32_t i = 0; i < s->npcs; i++) {
        struct cli_frame f = { .addr = s->pcs[i] };
        if ((g = frame_group(b, v, &f)) < 0)
            return (int)g;
        count(b, (size_t)g, si, s, first);
        first = false;
    }
    if (first) {
        const char *none = "(no frames)";
        if ((g = group_of(b, none, none, NULL, 0)) < 0)
            return (int)g;
        count(b, (size_t)g, si, s, true);
    }
    return 0;
}

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_val(double x, double y)
{
    return x == y ? 0 : x > y ? -1 : 1; /* descending */
}

static int cmp_group(const struct cli_group *x, const struct cli_group *y, bool by_alloc)
{
    int c;
    if (by_alloc) {
        if ((c = cmp_val(x->alloc_bytes, y->alloc_bytes)) || (c = cmp_val(x->cum_alloc_bytes, y->cum_alloc_bytes)))
            return c;
    }
    if ((c = cmp_val(x->live_bytes, y->live_bytes)) || (c = cmp_val(x->cum_live_bytes, y->cum_live_bytes)) ||
        (c = cmp_val(x->alloc_bytes, y->alloc_bytes)) || (c = cmp_val(x->cum_alloc_bytes, y->cum_alloc_bytes)))
        return c;
    if ((c = cmp_str(x->name, y->name)) || (c = cmp_str(x->module, y->module)))
        return c;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_live(const void *a, const void *b)
{
    return cmp_group(a, b, false);
}

static int cmp_alloc(const void *a, const void *b)
{
    return cmp_group(a, b, true);
}

int cli_view_build(const struct cli_profile *p, enum cli_view v, bool leaks_only, struct cli_view_result *out)
{
    struct builder b = { .r = out };
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (v == CLI_VIEW_STACK || (size_t)v >= sizeof(view_names) / sizeof(view_names[0]))
        return -EINVAL;
    for (size_t si = 0; si < p->nstacks && rc == 0; si++) {
        const struct cli_stack *s = &p->stacks[si];
        if (leaks_only && !s->raw_live_objects)
            continue;
        out->total_live_bytes += s->live_bytes;
        out->total_alloc_bytes += s->alloc_bytes;
        rc = add_stack(&b, p, v, si);
    }
    for (size_t g = 0; g < out->n; g++)
        free(b.keys[g]);
    free(b.keys);
    free(b.last_stack);
    cli_hindex_free(&b.index);
    if (rc < 0) {
        cli_view_free(out);
        return rc;
    }
    /* A churn workload frees everything: rank by what was allocated. */
    out->by_alloc = out->total_live_bytes <= 0;
    if (out->n > 1)
        qsort(out->groups, out->n, sizeof(*out->groups), out->by_alloc ? cmp_alloc : cmp_live);
    return 0;
}

void cli_view_free(struct cli_view_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->groups[i].name);
        free(r->groups[i].module);
    }
    free(r->groups);
    memset(r, 0, sizeof(*r));
}
