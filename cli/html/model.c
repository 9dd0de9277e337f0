/* model.c - the HTML page's compact data (model.h): strings, frames and
 * the call tree interned once, stacks as their innermost node. */
#include "cli/html/model.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/memory/report.h"
#include "cli/process/maps.h"
#include "cli/profile/leaks.h"
#include "cli/profile/merge.h"
#include "cli/profile/tick_top.h"
#include "cli/util/strtab.h"
#include "cli/util/u64map.h"

#define FRAME_FIELDS 5 /* name, file, line, module, module kind */

/* The frame id of a (function, module) pair of the profile's own string
 * pointers, remembered: a stack's frames are copies of a few thousand
 * distinct ones, and the pointers' ids, then the pair's, cost four hash
 * probes a frame (100,000 stacks: 2.4 million frames). Direct-mapped, the
 * pointers compared exactly: a miss only takes the long way. */
#define FRAME_MEMO 8192
struct frame_memo {
    const char *function, *module;
    long id; /* 0 in a zeroed slot: function NULL never hits (see frame_id) */
};

struct model {
    struct cli_strtab strs;        /* the page's "strings" */
    struct cli_u64map str_of_ptr;  /* a frame's string pointer -> its id: the
                                      symbolizer's strings are shared by
                                      thousands of frames, hashed only once */
    struct cli_strtab frame_keys;  /* (name, module) string ids -> frame id */
    uint32_t *frames;              /* FRAME_FIELDS per frame */
    size_t nframes, cap_frames;
    struct cli_hindex node_of;     /* (parent + 1) << 32 | frame -> node id (the
                                      key is the hash: one probe finds or adds) */
    struct frame_memo memo[FRAME_MEMO];
    int64_t *nodes;                /* 2 per node: parent (-1: a root), frame */
    size_t nnodes, cap_nodes;
    char *program;                 /* the executable's path (maps' first file), or NULL */
    char name[4200];               /* a frame's name when it has no function */
};

static long str_id(struct model *m, const char *s)
{
    if (!s)
        s = "";
    uint64_t id;
    if (cli_u64map_get(&m->str_of_ptr, (uint64_t)(uintptr_t)s, &id) == 0)
        return (long)id;
    long r = cli_strtab_intern(&m->strs, s);
    if (r < 0 || cli_u64map_put(&m->str_of_ptr, (uint64_t)(uintptr_t)s, (uint64_t)r) < 0)
        return -ENOMEM;
    return r;
}

static bool has_prefix(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

enum cli_html_module_kind cli_html_module_kind(const char *module, const char *program)
{
    if (!module || !*module)
        return CLI_HTML_MOD_UNKNOWN;
    if (!strcmp(module, "[jit]") || !strcmp(module, "[anon]"))
        return CLI_HTML_MOD_JIT;
    if (module[0] == '[') /* [vdso], [vsyscall]: the kernel's code for the process */
        return CLI_HTML_MOD_RUNTIME;
    if (program && !strcmp(module, program))
        return CLI_HTML_MOD_PROGRAM;
    const char *base = strrchr(module, '/');
    base = base ? base + 1 : module;
    /* The C and C++ runtimes, the loader, and the libraries of the
     * interpreters and VMs whose own frames are the runtime, not the program. */
    static const char *const runtime[] = { "libc.so", "libc-", "ld-linux", "ld-musl", "libm.so", "libpthread",
                                           "libdl.", "librt.", "libstdc++", "libgcc_s", "libc++", "libpython",
                                           "libjvm", "libnode", "libv8", "libruby", "libperl", "libluajit" };
    for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++)
        if (has_prefix(base, runtime[i]))
            return CLI_HTML_MOD_RUNTIME;
    return CLI_HTML_MOD_LIBRARY;
}

/* A frame without a function is named by its module's file name and its
 * offset in it, as the text report names it. */
static const char *frame_name(struct model *m, const struct cli_frame *f)
{
    if (f->function)
        return f->function;
    const char *mod = f->module ? strrchr(f->module, '/') : NULL;
    mod = mod ? mod + 1 : f->module ? f->module : "?";
    snprintf(m->name, sizeof(m->name), "%s+0x%" PRIx64, mod, f->module_offset);
    return m->name;
}

static long frame_id_slow(struct model *m, const struct cli_frame *f)
{
    long name = f->function ? str_id(m, f->function) : cli_strtab_intern(&m->strs, frame_name(m, f));
    long file = str_id(m, f->file), mod = str_id(m, f->module);
    if (name < 0 || file < 0 || mod < 0)
        return -ENOMEM;
    /* A function is one frame wherever its calls are (file:line kept
     * from its first frame): the graph and the tables merge by function,
     * as the text report's --by function does. */
    uint32_t key[2] = { (uint32_t)name, (uint32_t)mod };
    long id = cli_strtab_intern_len(&m->frame_keys, (const char *)key, sizeof(key));
    if (id < 0 || (size_t)id < m->nframes)
        return id;
    if (m->nframes == m->cap_frames) {
        size_t nc = m->cap_frames ? m->cap_frames * 2 : 1024;
        uint32_t *nf = realloc(m->frames, nc * FRAME_FIELDS * sizeof(*nf));
        if (!nf)
            return -ENOMEM;
        m->frames = nf;
        m->cap_frames = nc;
    }
    uint32_t *r = m->frames + m->nframes * FRAME_FIELDS;
    r[0] = (uint32_t)name;
    r[1] = (uint32_t)file;
    r[2] = (uint32_t)(f->line > 0 ? f->line : 0);
    r[3] = (uint32_t)mod;
    r[4] = cli_html_module_kind(f->module, m->program);
    m->nframes++;
    return id;
}

static long frame_id(struct model *m, const struct cli_frame *f)
{
    if (!f->function) /* named by module and offset: no pointer to key on */
        return frame_id_slow(m, f);
    uint64_t h = ((uint64_t)(uintptr_t)f->function * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)f->module;
    struct frame_memo *e = &m->memo[(h ^ h >> 29) % FRAME_MEMO];
    if (e->function == f->function && e->module == f->module)
        return e->id;
    long id = frame_id_slow(m, f);
    if (id >= 0)
        *e = (struct frame_memo){ f->function, f->module, id };
    return id;
}

static long node_id(struct model *m, long parent, long frame)
{
    uint64_t key = (uint64_t)(parent + 1) << 32 | (uint64_t)frame;
    long found = cli_hindex_find(&m->node_of, key, NULL, NULL);
    if (found >= 0)
        return found;
    if (m->nnodes == m->cap_nodes) {
        size_t nc = m->cap_nodes ? m->cap_nodes * 2 : 4096;
        int64_t *nn = realloc(m->nodes, nc * 2 * sizeof(*nn));
        if (!nn)
            return -ENOMEM;
        m->nodes = nn;
        m->cap_nodes = nc;
    }
    if (cli_hindex_add(&m->node_of, key, m->nnodes) < 0)
        return -ENOMEM;
    m->nodes[2 * m->nnodes] = parent;
    m->nodes[2 * m->nnodes + 1] = frame;
    return (long)m->nnodes++;
}

/* The innermost node of s: its frames from the outermost in. */
static long stack_node(struct model *m, const struct cli_stack *s)
{
    static const struct cli_frame unknown = { .function = "[unknown]" };
    long node = -1;
    if (!s->nframes) {
        long f = frame_id(m, &unknown);
        return f < 0 ? f : node_id(m, -1, f);
    }
    for (uint32_t i = s->nframes; i-- > 0;) {
        long f = frame_id(m, &s->frames[i]);
        if (f < 0 || (node = node_id(m, node, f)) < 0)
            return -ENOMEM;
    }
    return node;
}

/* Numbers as text in 64 characters that JSON and HTML leave alone
 * (base64url's): 5 bits a character, low bits first, 32 added to every
 * character but a number's last. A frame id below 32,768 takes 3
 * characters and no separator, where decimal takes up to 6 (issue 30:
 * 100,000 stacks in a page of at most 10 MB). viewer's model.js reads them. */
static const char VARINT_CHARS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void put_varint(FILE *out, uint64_t v)
{
    char b[16];
    size_t n = 0;
    do {
        unsigned low = v & 31;
        v >>= 5;
        b[n++] = VARINT_CHARS[low | (v ? 32 : 0)];
    } while (v);
    fwrite(b, 1, n, out);
}

static void put_num(FILE *out, double v)
{
    put_varint(out, isfinite(v) && v > 0 && v < 1.8e19 ? (uint64_t)llround(v) : 0);
}

/* "key": "varints": node, live B, live objects, alloc B, alloc objects
 * of each stack */
static int write_stacks(struct model *m, const struct cli_profile *p, const char *key, FILE *out)
{
    fprintf(out, ",\n\"%s\":\"", key);
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        long node = stack_node(m, s);
        if (node < 0)
            return -ENOMEM;
        put_varint(out, (uint64_t)node);
        put_num(out, s->live_bytes);
        put_num(out, s->live_objects);
        put_num(out, s->alloc_bytes);
        put_num(out, s->alloc_objects);
    }
    fputs("\"", out);
    return 0;
}

/* The call tree as chains: a stack adds its frames past the part of it
 * already in the tree as nodes numbered one after the other, each the
 * child of the one before: "parent + 1 (0: a root), count, frame ids". */
static void write_nodes(const struct model *m, FILE *out)
{
    fprintf(out, ",\n\"node_count\":%zu,\"nodes\":\"", m->nnodes);
    for (size_t i = 0; i < m->nnodes;) {
        size_t end = i + 1;
        while (end < m->nnodes && m->nodes[2 * end] == (int64_t)end - 1)
            end++;
        put_varint(out, (uint64_t)(m->nodes[2 * i] + 1));
        put_varint(out, end - i);
        for (; i < end; i++)
            put_varint(out, (uint64_t)m->nodes[2 * i + 1]);
    }
    fputs("\"", out);
}

static void write_totals(const struct cli_profile *p, const char *key, FILE *out)
{
    const struct hi_totals *t = &p->totals;
    fprintf(out, ",\n\"%s\":{\"pid\":%d,\"rate\":%" PRIu64 ",\"duration_s\":%.3f,\"tick_ms\":%u,\"rss_bytes\":%" PRIu64
                 ",\"stacks\":%zu,\"live_bytes\":%" PRIu64 ",\"live_objects\":%" PRIu64 ",\"alloc_bytes\":%" PRIu64
                 ",\"alloc_objects\":%" PRIu64 ",\"raw_samples\":%" PRIu64 ",\"dropped_samples\":%" PRIu64 "}",
            key, (int)p->pid, p->rate, p->duration_s, p->tick_ms, p->rss_bytes, p->nstacks, t->est_live_bytes,
            t->est_live_objects, t->est_alloc_bytes, t->est_alloc_objects, t->raw_samples, t->dropped_samples);
}

/* The memory over time, 4 numbers a tick: seconds, RSS, live, allocated. */
static void write_ticks(const struct cli_profile *p, FILE *out)
{
    fputs(",\n\"ticks\":[", out);
    for (size_t i = 0; i < p->nticks; i++) {
        const struct cli_tick *t = &p->ticks[i];
        fprintf(out, "%s%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64, i ? "," : "", t->t_s, t->rss_bytes, t->live_bytes,
                t->alloc_bytes);
    }
    fputs("]", out);
}

/* The stacks that grew most from one tick to the next, as series over the
 * ticks their growth points cover (the agent keeps each stack's live
 * bytes at its last HI_GROWTH_POINTS ticks, taken when it sends each
 * TICK: point k of n is tick nticks - n + k). For each step between two
 * ticks, its TICK_STACKS_PER_STEP stacks that rose most; together at most
 * TICK_STACKS_MAX series, the most grown over the window first.
 * "tick_stacks": {"first_tick": i, "points": n, "series": [stack,
 * n values (-1: no point), ...]}. */
#define TICK_STACKS_PER_STEP 3
#define TICK_STACKS_MAX 10

struct tick_pick {
    size_t stack;
    int64_t rise; /* over the window drawn: last point minus first */
};

static int cmp_pick(const void *a, const void *b)
{
    const struct tick_pick *x = a, *y = b;
    if (x->rise != y->rise)
        return x->rise > y->rise ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Last point minus first, of the points from k0 on (the window drawn). */
static int64_t stack_rise(const struct cli_stack *s, unsigned k0)
{
    int first = -1, last = -1;
    for (int k = (int)k0; k < (int)HI_GROWTH_POINTS; k++)
        if (s->growth[k] >= 0) {
            if (first < 0)
                first = k;
            last = k;
        }
    return first < 0 ? 0 : s->growth[last] - s->growth[first];
}

/* From the ticks' own top risers (an agent that sends them): the whole
 * session, at most TICK_POINTS_MAX points a series, each the newest value
 * in its "stride" ticks that the stack was among its tick's top risers or
 * its kept risers (-1: in neither at those ticks). Series: the stacks whose rises, summed over
 * the ticks they were among the top, are greatest. */
#define TICK_POINTS_MAX 600

static int write_tick_stacks_session(const struct cli_profile *p, FILE *out)
{
    struct cli_tick_top_index ix;
    if (cli_tick_top_index_init(&ix, p) < 0)
        return -ENOMEM;
    double *rise = calloc(p->nstacks ? p->nstacks : 1, sizeof(*rise));
    struct tick_pick *pick = calloc(p->nstacks ? p->nstacks : 1, sizeof(*pick));
    int64_t *vals = malloc(TICK_POINTS_MAX * sizeof(*vals));
    if (!rise || !pick || !vals) {
        cli_tick_top_index_free(&ix), free(rise), free(pick), free(vals);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->nticks; i++) {
        const struct cli_tick *t = &p->ticks[i];
        for (unsigned k = 0; k < t->ntop && k < HI_TICK_TOP; k++) {
            int64_t st = cli_tick_top_stack(&ix, t, k);
            if (st >= 0 && t->top_grew[k] > 0)
                rise[st] += (double)t->top_grew[k];
        }
    }
    size_t npick = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        if (rise[i] > 0)
            pick[npick++] = (struct tick_pick){ i, (int64_t)rise[i] };
    qsort(pick, npick, sizeof(pick[0]), cmp_pick);
    size_t stride = (p->nticks + TICK_POINTS_MAX - 1) / TICK_POINTS_MAX;
    size_t npoints = (p->nticks + stride - 1) / stride;
    fprintf(out, ",\n\"tick_stacks\":{\"first_tick\":0,\"points\":%zu,\"stride\":%zu,\"series\":[", npoints,
            stride);
    for (size_t j = 0; j < npick && j < TICK_STACKS_MAX; j++) {
        for (size_t k = 0; k < npoints; k++)
            vals[k] = -1;
        for (size_t i = 0; i < p->nticks; i++) {
            const struct cli_tick *t = &p->ticks[i];
            int64_t v = -1;
            for (unsigned k = 0; k < t->ntop && k < HI_TICK_TOP && v < 0; k++)
                if (cli_tick_top_stack(&ix, t, k) == (int64_t)pick[j].stack)
                    v = (int64_t)t->top_live[k];
            /* a riser kept after it stopped rising: flat or falling */
            for (unsigned k = 0; k < t->nkept && k < HI_TICK_KEPT && v < 0; k++)
                if (cli_tick_kept_stack(&ix, t, k) == (int64_t)pick[j].stack)
                    v = (int64_t)t->kept_live[k];
            if (v >= 0)
                vals[i / stride] = v;
        }
        fprintf(out, "%s%zu", j ? "," : "", pick[j].stack);
        for (size_t k = 0; k < npoints; k++)
            fprintf(out, ",%" PRId64, vals[k]);
    }
    fputs("]}", out);
    cli_tick_top_index_free(&ix), free(rise), free(pick), free(vals);
    return 0;
}

/* From each stack's HI_GROWTH_POINTS growth points: a profile from an
 * older agent, or a saved JSON without the ticks' "top". */
static void write_tick_stacks_window(const struct cli_profile *p, FILE *out)
{
    size_t npoints = p->nticks < HI_GROWTH_POINTS ? p->nticks : HI_GROWTH_POINTS;
    if (npoints < 2)
        return;
    struct tick_pick pick[TICK_STACKS_PER_STEP * HI_GROWTH_POINTS];
    size_t npick = 0;
    unsigned k0 = HI_GROWTH_POINTS - (unsigned)npoints;
    for (unsigned k = k0 + 1; k < HI_GROWTH_POINTS; k++) {
        /* this step's top few by rise: a small insertion list */
        struct { size_t stack; int64_t up; } top[TICK_STACKS_PER_STEP];
        unsigned ntop = 0;
        for (size_t i = 0; i < p->nstacks; i++) {
            const int64_t *g = p->stacks[i].growth;
            if (g[k - 1] < 0 || g[k] <= g[k - 1])
                continue;
            int64_t up = g[k] - g[k - 1];
            unsigned at = ntop;
            while (at > 0 && top[at - 1].up < up)
                at--;
            if (at >= TICK_STACKS_PER_STEP)
                continue;
            if (ntop < TICK_STACKS_PER_STEP)
                ntop++;
            memmove(&top[at + 1], &top[at], (ntop - 1 - at) * sizeof(top[0]));
            top[at].stack = i;
            top[at].up = up;
        }
        for (unsigned t = 0; t < ntop; t++) {
            bool seen = false;
            for (size_t j = 0; j < npick && !seen; j++)
                seen = pick[j].stack == top[t].stack;
            if (!seen)
                pick[npick++] = (struct tick_pick){ top[t].stack, stack_rise(&p->stacks[top[t].stack], k0) };
        }
    }
    qsort(pick, npick, sizeof(pick[0]), cmp_pick);
    fprintf(out, ",\n\"tick_stacks\":{\"first_tick\":%zu,\"points\":%zu,\"stride\":1,\"series\":[",
            p->nticks - npoints, npoints);
    for (size_t j = 0; j < npick && j < TICK_STACKS_MAX; j++) {
        fprintf(out, "%s%zu", j ? "," : "", pick[j].stack);
        for (unsigned k = k0; k < HI_GROWTH_POINTS; k++)
            fprintf(out, ",%" PRId64, p->stacks[pick[j].stack].growth[k] < 0 ? -1 : p->stacks[pick[j].stack].growth[k]);
    }
    fputs("]}", out);
}

static int write_tick_stacks(const struct cli_profile *p, FILE *out)
{
    if (p->nticks < 2)
        return 0;
    if (cli_ticks_have_top(p))
        return write_tick_stacks_session(p, out);
    /* The growth points are one process's last ticks: in ticks of several
     * processes merged (older agents) they match no span of the timeline. */
    for (size_t i = 1; i < p->nticks; i++)
        if (p->ticks[i].pid != p->ticks[0].pid)
            return 0;
    write_tick_stacks_window(p, out);
    return 0;
}

/* The leak rankings: [stack, oldest age s, mean age s] and [stack, bytes/s]. */
static int write_leaks(const struct cli_profile *p, FILE *out)
{
    struct cli_leak_views v;
    if (cli_leaks_views(p, &v) < 0)
        return -ENOMEM;
    const struct cli_leak *lk = v.leaks;
    const struct cli_growth *gr = v.growing;
    size_t nl = v.nleaks, ng = v.ngrowing;
    fputs(",\n\"leaks\":[", out);
    for (size_t i = 0; i < nl && i < 100; i++)
        fprintf(out, "%s%zu,%.3f,%.3f", i ? "," : "", lk[i].stack, lk[i].oldest_age_s, lk[i].mean_age_s);
    fputs("],\n\"growing\":[", out);
    for (size_t i = 0; i < ng && i < 100; i++)
        fprintf(out, "%s%zu,%.1f", i ? "," : "", gr[i].stack, isfinite(gr[i].per_s) ? gr[i].per_s : 0);
    fputs("]", out);
    cli_leaks_views_free(&v);
    return 0;
}

static void write_str_array(const struct cli_strtab *t, FILE *out)
{
    for (size_t i = 0; i < t->n; i++) {
        fputs(i ? "," : "", out);
        cli_json_write_str(out, t->strs[i]);
    }
}

/* What the profile could not see: modules without debug information. */
static void write_unseen(const struct cli_profile *p, FILE *out)
{
    fputs(",\n\"no_debuginfo\":[", out);
    for (size_t i = 0; i < p->ndebug_hints; i++) {
        fputs(i ? "," : "", out);
        cli_json_write_str(out, p->debug_hints[i].module);
    }
    fputs("]", out);
}

static char *program_of(const struct cli_profile *p)
{
    struct cli_map *maps;
    size_t n;
    char *prog = NULL;
    if (!p->maps || cli_maps_parse(p->maps, p->maps_len, &maps, &n) < 0)
        return NULL;
    for (size_t i = 0; i < n && !prog; i++)
        if (maps[i].path && maps[i].pathlen && maps[i].path[0] == '/')
            prog = strndup(maps[i].path, maps[i].pathlen);
    free(maps);
    return prog;
}

/* Whether p covers several processes (a merged report, -p A,B,
 * --children): only then do its stacks need their pids. */
static bool several_processes(const struct cli_profile *p)
{
    for (size_t i = 1; i < p->nstacks; i++)
        if (cli_stack_pid(p, &p->stacks[i]) != cli_stack_pid(p, &p->stacks[0]))
            return true;
    return p->nprocesses > 1;
}

/* Each stack's pid, in "stacks" order, when p covers several processes:
 * the viewer's process selector (model.js) filters by it. */
static void write_stack_pids(const struct cli_profile *p, const char *key, FILE *out)
{
    if (!several_processes(p))
        return;
    fprintf(out, ",\n\"%s\":[", key);
    for (size_t i = 0; i < p->nstacks; i++)
        fprintf(out, "%s%d", i ? "," : "", (int)cli_stack_pid(p, &p->stacks[i]));
    fputs("]", out);
}

/* The profile's processes: pid and name (comm, null when unknown). */
static void write_processes(const struct cli_profile *p, FILE *out)
{
    struct cli_process one;
    size_t n;
    const struct cli_process *procs = cli_profile_process_list(p, &n, &one);
    fputs(",\n\"processes\":[", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)procs[i].pid);
        if (procs[i].comm)
            cli_json_write_str(out, procs[i].comm);
        else
            fputs("null", out);
        fputs("}", out);
    }
    fputs("]", out);
}

static int write_profile_parts(struct model *m, const struct cli_html_input *in, FILE *out)
{
    const struct cli_profile *p = in->cur;
    write_totals(p, "profile", out);
    if (in->base)
        write_totals(in->base, "base_profile", out);
    fputs(",\n\"memory\":", out);
    cli_memory_write_json(p->memory, "", out);
    write_ticks(p, out);
    if (write_tick_stacks(p, out) < 0)
        return -ENOMEM;
    int rc = write_leaks(p, out);
    write_unseen(p, out);
    if (rc == 0)
        rc = write_stacks(m, p, "stacks", out);
    if (rc == 0)
        write_stack_pids(p, "pids", out);
    if (rc == 0 && in->base) {
        rc = write_stacks(m, in->base, "base", out);
        write_stack_pids(in->base, "base_pids", out);
    }
    write_processes(p, out);
    return rc;
}

int cli_html_model_write(const struct cli_html_input *in, FILE *out)
{
    struct model m;
    memset(&m, 0, sizeof(m));
    int rc = 0;
    const char *kind = !in->cur ? "census" : in->base ? "diff" : "profile";
    fprintf(out, "{\"schema\":\"heapinject-html\",\"version\":1,\"kind\":\"%s\"", kind);
    if (in->note) {
        fputs(",\n\"note\":", out);
        cli_json_write_str(out, in->note);
    }
    const struct cli_census *census = in->census ? in->census : in->cur ? in->cur->census : NULL;
    if (census) {
        fprintf(out, ",\n\"census_pid\":%d,\"census_comm\":", (int)census->pid);
        cli_json_write_str(out, census->comm);
        fputs(",\n\"census\":", out);
        cli_census_write_json_body(out, census, in->top ? in->top : 100);
    }
    if (in->cur) {
        m.program = program_of(in->cur);
        rc = write_profile_parts(&m, in, out);
    }
    if (rc == 0) {
        fputs(",\n\"strings\":[", out);
        write_str_array(&m.strs, out);
        fputs("],\n\"frames\":[", out);
        for (size_t i = 0; i < m.nframes * FRAME_FIELDS; i++)
            fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, m.frames[i]);
        fputs("]", out);
        write_nodes(&m, out);
        fputs("}\n", out);
    }
    cli_strtab_free(&m.strs);
    cli_strtab_free(&m.frame_keys);
    cli_u64map_free(&m.str_of_ptr);
    cli_hindex_free(&m.node_of);
    free(m.frames);
    free(m.nodes);
    free(m.program);
    if (rc == 0 && ferror(out))
        rc = -EIO;
    return rc;
}
