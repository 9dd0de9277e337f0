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
#include "cli/util/strtab.h"
#include "cli/util/u64map.h"

#define FRAME_FIELDS 5 /* name, file, line, module, module kind */

struct model {
    struct cli_strtab strs;        /* the page's "strings" */
    struct cli_u64map str_of_ptr;  /* a frame's string pointer -> its id: the
                                      symbolizer's strings are shared by
                                      thousands of frames, hashed only once */
    struct cli_strtab frame_keys;  /* (name, module) string ids -> frame id */
    uint32_t *frames;              /* FRAME_FIELDS per frame */
    size_t nframes, cap_frames;
    struct cli_u64map node_of;     /* (parent + 1) << 32 | frame -> node id */
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

static long frame_id(struct model *m, const struct cli_frame *f)
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

static long node_id(struct model *m, long parent, long frame)
{
    uint64_t key = (uint64_t)(parent + 1) << 32 | (uint64_t)frame, id;
    if (cli_u64map_get(&m->node_of, key, &id) == 0)
        return (long)id;
    if (m->nnodes == m->cap_nodes) {
        size_t nc = m->cap_nodes ? m->cap_nodes * 2 : 4096;
        int64_t *nn = realloc(m->nodes, nc * 2 * sizeof(*nn));
        if (!nn)
            return -ENOMEM;
        m->nodes = nn;
        m->cap_nodes = nc;
    }
    if (cli_u64map_put(&m->node_of, key, m->nnodes) < 0)
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
    cli_u64map_free(&m.node_of);
    free(m.frames);
    free(m.nodes);
    free(m.program);
    if (rc == 0 && ferror(out))
        rc = -EIO;
    return rc;
}
