/* text.c - the terminal report: totals, top stacks with their frames,
 * functions by flat and cumulative bytes (like `pprof -top`), and with
 * --leaks the live blocks with their ages and the growing stacks; or, with
 * --by function|module|thread, one ranked table of those groups. */
#include "cli/report/python_note.h"
#include "cli/report/processes.h"
#include "cli/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/memory/report.h"
#include "cli/profile/leaks.h"
#include "cli/util/fmt.h"
#include "cli/report/fold.h"
#include "cli/symbolize/debughint.h"
#include "cli/process/children.h"
#include "cli/report/formats.h"

#define FRAMES_SHOWN 8u

/* "object" for a count that prints as 1, else "objects" (estimates are
 * fractional: 0.6 rounds to "1" and reads as one). */
static const char *noun(double n, const char *one, const char *many)
{
    return n >= 0.5 && n < 1.5 ? one : many;
}

/* say_rest: also the "(N more frames)" line under the cut. */
static void print_frames_cut(const struct cli_stack *s, bool say_rest, FILE *out)
{
    if (!s->nframes && s->npcs) {
        /* Not symbolized (a profile written without symbols). */
        for (uint32_t i = 0; i < s->npcs && i < FRAMES_SHOWN; i++)
            fprintf(out, "        0x%" PRIx64 "\n", s->pcs[i]);
        if (s->npcs > FRAMES_SHOWN && say_rest)
            fprintf(out, "        (%u more %s)\n", s->npcs - FRAMES_SHOWN, noun(s->npcs - FRAMES_SHOWN, "frame", "frames"));
        return;
    }
    /* Inlined library frames fold into one line (cli/report/fold.h), so
     * that the cap leaves room for the program's own frames. */
    struct cli_fold_line lines[FRAMES_SHOWN];
    uint32_t rest, nlines = cli_fold_lines(s, lines, FRAMES_SHOWN, &rest);
    for (uint32_t i = 0; i < nlines; i++) {
        const struct cli_frame *f = &s->frames[lines[i].frame];
        char nb[512], where[512] = "", note[64] = "";
        const char *name = cli_stack_frame_name(f, nb, sizeof(nb));
        if (f->file && f->line)
            snprintf(where, sizeof(where), "%s:%d", cli_paths_basename(f->file), f->line);
        else if (f->file)
            snprintf(where, sizeof(where), "%s", cli_paths_basename(f->file));
        else if (f->function && f->module)
            snprintf(where, sizeof(where), "%s", cli_paths_basename(f->module));
        else if (f->module && f->module[0] == '[') /* [jit], [anon], [vdso]: which mapping */
            snprintf(where, sizeof(where), "mapping at 0x%" PRIx64, f->addr - f->module_offset);
        if (lines[i].folded)
            snprintf(note, sizeof(note), " (%s%u library %s inlined in it folded)", f->inlined ? "inlined; " : "",
                     lines[i].folded, noun(lines[i].folded, "frame", "frames"));
        else if (f->inlined)
            snprintf(note, sizeof(note), " (inlined)");
        char sn[512], sw[512];
        fprintf(out, "        %-40s %s%s\n", cli_fmt_printable(name, sn, sizeof(sn)),
                cli_fmt_printable(where, sw, sizeof(sw)), note);
    }
    if (rest && say_rest)
        fprintf(out, "        (%u more %s)\n", rest, noun(rest, "frame", "frames"));
    if (!s->nframes)
        fprintf(out, "        (no frames)\n");
}

static void print_frames(const struct cli_stack *s, FILE *out)
{
    print_frames_cut(s, true, out);
}

/* Whether frames of s are cut off below the lines shown. */
static bool frames_cut(const struct cli_stack *s)
{
    if (!s->nframes)
        return s->npcs > FRAMES_SHOWN;
    struct cli_fold_line lines[FRAMES_SHOWN];
    uint32_t rest;
    cli_fold_lines(s, lines, FRAMES_SHOWN, &rest);
    return rest > 0;
}

/* The frame lines print_frames shows for s, without the count of those
 * cut off, as one string (malloc'd; NULL when out of memory). */
static char *shown_frames(const struct cli_stack *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    print_frames_cut(s, false, f);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Two frames that read the same in a report: function, file and line. */
static bool same_frame(const struct cli_frame *a, const struct cli_frame *b)
{
    return same_str(a->function, b->function) && same_str(a->file, b->file) && a->line == b->line &&
           (a->function || a->file || a->addr == b->addr);
}

/* Ranked stacks (#1, #2, ...) whose shown lines are those of an earlier
 * entry: two entries that read the same would look like one stack counted
 * twice. They differ below the cut (or in addresses the lines do not
 * show): say so on the later entry, naming the earlier one. shown[] holds
 * the entries' shown lines (NULL: unknown, never matched). */
static void print_same_as(char *const *shown, size_t i, const struct cli_stack *s,
                          const struct cli_stack *const *ranked, FILE *out)
{
    if (!shown[i])
        return;
    for (size_t j = 0; j < i; j++)
        if (shown[j] && !strcmp(shown[j], shown[i]) && ranked[j]->pid == s->pid) {
            /* (stacks of two processes: each entry names its pid) */
            const struct cli_stack *other = ranked[j];
            uint32_t k = 0;
            while (k < s->nframes && k < other->nframes && same_frame(&s->frames[k], &other->frames[k]))
                k++;
            char here[256], there[256], nb[256], sh[256], st[256];
            snprintf(here, sizeof(here), "%s", k < s->nframes ? cli_stack_frame_name(&s->frames[k], nb, sizeof(nb)) : "its end");
            snprintf(there, sizeof(there), "%s",
                     k < other->nframes ? cli_stack_frame_name(&other->frames[k], nb, sizeof(nb)) : "its end");
            if ((frames_cut(s) || frames_cut(other)) && (k < s->nframes || k < other->nframes))
                fprintf(out, "        (the same lines as #%zu above: the two stacks part below them, at frame %u: "
                             "%s here, %s in #%zu)\n", j + 1, k + 1, cli_fmt_printable(here, sh, sizeof(sh)),
                        cli_fmt_printable(there, st, sizeof(st)), j + 1);
            else if (frames_cut(s) || frames_cut(other))
                fprintf(out, "        (the same lines as #%zu above: the two stacks differ in frames below these)\n",
                        j + 1);
            else
                fprintf(out, "        (the same lines as #%zu above: the two stacks differ in addresses these lines "
                             "do not show)\n", j + 1);
            return;
        }
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static void print_header(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    char a[32], b[32], c[32], d[32], e[32];
    const struct hi_totals *t = &p->totals;

    if (opt->note && opt->note[0])
        fprintf(out, "NOTE: %s\n\n", opt->note);
    if (!cli_report_processes_header(p, out))
        fprintf(out, "heapinject: pid %d, %s since attach, sampling 1 in every %s allocated on average\n\n",
            (int)p->pid, cli_fmt_duration(p->duration_s, a, sizeof(a)), cli_fmt_bytes((double)p->rate, b, sizeof(b)));
    /* Exact bytes are usable sizes on both sides (payload/hooks.c), so
     * freed and allocated compare; estimates are requested sizes. */
    fprintf(out, "Since attach (estimated from %" PRIu64 " %s; exact counts in brackets, in usable bytes):\n",
            t->raw_samples, noun((double)t->raw_samples, "sample", "samples"));
    fprintf(out, "  allocated  %10s in %8s %-7s   [%s in %s %s]\n",
            cli_fmt_bytes((double)t->est_alloc_bytes, a, sizeof(a)), cli_fmt_count((double)t->est_alloc_objects, b, sizeof(b)),
            noun((double)t->est_alloc_objects, "object", "objects"),
            cli_fmt_bytes((double)t->exact_alloc_bytes, c, sizeof(c)), cli_fmt_count((double)t->exact_alloc_calls, d, sizeof(d)),
            noun((double)t->exact_alloc_calls, "call", "calls"));
    fprintf(out, "  freed      %10s in %8s %-7s   [%s in %s %s, including blocks from before attach]\n",
            cli_fmt_bytes((double)t->est_free_bytes, a, sizeof(a)), cli_fmt_count((double)t->est_free_objects, b, sizeof(b)),
            noun((double)t->est_free_objects, "object", "objects"),
            cli_fmt_bytes((double)t->exact_free_bytes, c, sizeof(c)), cli_fmt_count((double)t->exact_free_calls, d, sizeof(d)),
            noun((double)t->exact_free_calls, "call", "calls"));
    fprintf(out, "  live       %10s in %8s %-7s   (allocated since attach and not freed)\n",
            cli_fmt_bytes((double)t->est_live_bytes, a, sizeof(a)), cli_fmt_count((double)t->est_live_objects, b, sizeof(b)),
            noun((double)t->est_live_objects, "object", "objects"));
    struct cli_profile_kind_sums mk;
    cli_profile_kind_sum(p, HI_KIND_MMAP, &mk);
    if (mk.nstacks || (p->have_mmap && p->mmap.map_calls)) {
        /* Direct mmap is its own family: not in the malloc lines above. */
        fprintf(out, "  mmap live  %10s in %8s mappings  (anonymous memory mapped directly since attach; stacks marked [mmap])\n",
                cli_fmt_bytes(mk.live_bytes, a, sizeof(a)), cli_fmt_count(mk.live_objects, b, sizeof(b)));
        if (p->have_mmap)
            fprintf(out, "             [%s mapped in %s calls; %s munmap calls, %s mremap calls]\n",
                    cli_fmt_bytes((double)p->mmap.map_bytes, a, sizeof(a)),
                    cli_fmt_count((double)p->mmap.map_calls, b, sizeof(b)),
                    cli_fmt_count((double)p->mmap.unmap_calls, c, sizeof(c)),
                    cli_fmt_count((double)p->mmap.remap_calls, d, sizeof(d)));
    }
    struct cli_profile_kind_sums pk;
    cli_profile_kind_sum(p, HI_KIND_PYMALLOC, &pk);
    if (pk.nstacks || (p->have_pymalloc && p->pymalloc.status > 0))
        /* Inside the arenas that the mmap line counts: not added to it. */
        fprintf(out, "  pymalloc live %7s in %8s objects   (Python's objects since attach, inside pymalloc's arenas: "
                     "part of mmap's bytes, not added to them; stacks marked [pymalloc])\n",
                cli_fmt_bytes(pk.live_bytes, a, sizeof(a)), cli_fmt_count(pk.live_objects, b, sizeof(b)));
    if (p->have_pymalloc && p->pymalloc.status <= 0)
        fprintf(out, "  %s\n", p->pymalloc.status == 0 ? "pymalloc not sampled yet: the agent waits for the GIL"
                                                         : p->pymalloc.why);
    fprintf(out, "  target RSS %10s; %s distinct %s; %" PRIu64 " %s dropped; profiler memory %s\n",
            cli_fmt_bytes((double)p->rss_bytes, a, sizeof(a)), cli_fmt_count((double)p->nstacks, e, sizeof(e)),
            noun((double)p->nstacks, "stack", "stacks"), t->dropped_samples,
            noun((double)t->dropped_samples, "sample", "samples"), cli_fmt_bytes((double)t->payload_mem_bytes, c, sizeof(c)));
    uint64_t at_budget = p->have_walks ? p->walks.budget_dropped : 0;
    if (at_budget > t->dropped_samples)
        at_budget = t->dropped_samples;
    if (at_budget)
        fprintf(out, "  (%" PRIu64 " of them at the profiler's memory budget, %s: its tables may take a quarter of "
                     "the room below the process's memory cgroup limit, so that they never push it over; a larger "
                     "--rate keeps fewer stacks)\n",
                at_budget, cli_fmt_bytes((double)p->walks.budget_bytes, a, sizeof(a)));
    if (t->dropped_samples > at_budget)
        fprintf(out, "  (%s dropped because the profiler's tables were full: use a larger --rate)\n",
                at_budget ? "the others were" : "samples were");
    if (p->have_walks && p->walks.truncated)
        fprintf(out,
                "  %" PRIu64 " of %" PRIu64 " sampled stacks (%.1f%%) end early, at a frame with no unwind information\n"
                "  and no frame pointer (JIT code, hand-written assembly): their outer callers are missing\n",
                p->walks.truncated, p->walks.walks, 100.0 * (double)p->walks.truncated / (double)p->walks.walks);
    char py[512];
    if (cli_python_note(p, py, sizeof(py)))
        fprintf(out, "  %s\n", py);
    fputc('\n', out);
    if (p->memory) {
        cli_memory_write_text(p->memory, "", out);
        fputc('\n', out);
    }
}

static void print_stacks(const struct cli_profile *p, unsigned top, FILE *out)
{
    char a[32], b[32], c[32], d[32];
    double total_live = 0, total_alloc = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        if (p->stacks[i].kind == HI_KIND_PYMALLOC)
            continue; /* inside the arenas of the mmap stacks: counted there */
        total_live += p->stacks[i].live_bytes;
        total_alloc += p->stacks[i].alloc_bytes;
    }
    size_t n = p->nstacks < top ? p->nstacks : top;
    if (n == p->nstacks)
        fprintf(out, "%s by live bytes (estimated; %% of all live bytes):\n",
                n == 1 ? "The only stack" : n == 2 ? "Both stacks" : "All stacks");
    else
        fprintf(out, "Top %zu of %zu stacks by live bytes (estimated; %% of all live bytes):\n", n, p->nstacks);
    char **shown = calloc(n + 1, sizeof(char *));
    const struct cli_stack **ranked = calloc(n + 1, sizeof(*ranked));
    for (size_t i = 0; i < n; i++) {
        const struct cli_stack *s = &p->stacks[i];
        bool map = s->kind == HI_KIND_MMAP;
        char proc[256];
        fprintf(out, "#%-3zu %s%slive %s (%.1f%%) in %s %s; %s %s (%.1f%%) in %s %s\n", i + 1,
                cli_report_stack_process(p, s, proc, sizeof(proc)),
                map ? "[mmap] " : s->kind == HI_KIND_PYMALLOC ? "[pymalloc] " : "",
                cli_fmt_bytes(s->live_bytes, a, sizeof(a)), pct(s->live_bytes, total_live),
                cli_fmt_count(s->live_objects, b, sizeof(b)),
                map ? noun(s->live_objects, "mapping", "mappings") : noun(s->live_objects, "object", "objects"),
                map ? "mapped" : "allocated", cli_fmt_bytes(s->alloc_bytes, c, sizeof(c)),
                pct(s->alloc_bytes, total_alloc), cli_fmt_count(s->alloc_objects, d, sizeof(d)),
                map ? noun(s->alloc_objects, "mapping", "mappings") : noun(s->alloc_objects, "object", "objects"));
        print_frames(s, out);
        if (shown && ranked && (shown[i] = shown_frames(s))) {
            ranked[i] = s;
            print_same_as(shown, i, s, ranked, out);
        }
    }
    fputc('\n', out);
    for (size_t i = 0; shown && i < n; i++)
        free(shown[i]);
    free(shown);
    free(ranked);
}

struct func_row {
    char *name;
    double flat, cum;
    size_t last_stack; /* counts each stack once in cum (recursion) */
};

static int cmp_func(const void *a, const void *b)
{
    const struct func_row *x = a, *y = b;
    if (x->flat != y->flat)
        return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Functions by flat live bytes, with cumulative bytes, like pprof -top.
 * Linear search over the rows: reports have at most a few thousand
 * distinct functions and this runs once. */
static int print_functions(const struct cli_profile *p, unsigned top, bool by_alloc, FILE *out)
{
    struct func_row *rows = NULL;
    size_t nrows = 0, cap = 0;
    double total = 0;
    int rc = 0;

    for (size_t si = 0; si < p->nstacks; si++) {
        const struct cli_stack *s = &p->stacks[si];
        double v = by_alloc ? s->alloc_bytes : s->live_bytes;
        total += v;
        for (uint32_t fi = 0; fi < s->nframes; fi++) {
            char nb[512];
            const char *name = cli_stack_frame_name(&s->frames[fi], nb, sizeof(nb));
            size_t r;
            for (r = 0; r < nrows; r++)
                if (!strcmp(rows[r].name, name))
                    break;
            if (r == nrows) {
                if (nrows == cap) {
                    size_t nc = cap ? cap * 2 : 64;
                    struct func_row *nr = realloc(rows, nc * sizeof(*nr));
                    if (!nr) {
                        rc = -ENOMEM;
                        goto out;
                    }
                    rows = nr;
                    cap = nc;
                }
                rows[nrows] = (struct func_row){ strdup(name), 0, 0, (size_t)-1 };
                if (!rows[nrows].name) {
                    rc = -ENOMEM;
                    goto out;
                }
                nrows++;
            }
            if (fi == 0)
                rows[r].flat += v;
            if (rows[r].last_stack != si) {
                rows[r].cum += v;
                rows[r].last_stack = si;
            }
        }
    }
    if (!nrows)
        goto out;
    if (total <= 0) { /* a table of 0 B rows says nothing */
        fprintf(out, "Functions by %s bytes: none; every block sampled since attach was freed.\n\n",
                by_alloc ? "allocated" : "live");
        goto out;
    }
    qsort(rows, nrows, sizeof(*rows), cmp_func);
    size_t n = nrows < top * 2 ? nrows : top * 2;
    fprintf(out, "Functions by %s bytes (flat: allocated in the function itself; cum: in it or its callees):\n",
            by_alloc ? "allocated" : "live");
    fprintf(out, "%12s %6s %6s %12s %6s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "function");
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        char a[32], b[32], name[512];
        sum += rows[i].flat;
        fprintf(out, "%12s %5.1f%% %5.1f%% %12s %5.1f%%  %s\n", cli_fmt_bytes(rows[i].flat, a, sizeof(a)),
                pct(rows[i].flat, total), pct(sum, total), cli_fmt_bytes(rows[i].cum, b, sizeof(b)),
                pct(rows[i].cum, total), cli_fmt_printable(rows[i].name, name, sizeof(name)));
    }
    fputc('\n', out);
out:
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].name);
    free(rows);
    return rc;
}

static int print_leaks(const struct cli_profile *p, unsigned top, FILE *out)
{
    char a[32], b[32], c[32], d[32];
    struct cli_leak_views v;

    if (cli_leaks_views(p, &v) < 0)
        return -ENOMEM;
    const struct cli_leak *lk = v.leaks;
    const struct cli_growth *gr = v.growing;
    size_t nl = v.nleaks, ng = v.ngrowing;
    size_t n = nl < top ? nl : top;
    if (!nl)
        fprintf(out, "Leak candidates: none; every block sampled since attach was freed.\n");
    else
        fprintf(out, "Leak candidates: %zu %s sampled blocks that are still live; top %zu by live bytes:\n", nl,
                nl == 1 ? "stack holds" : "stacks hold", n);
    char **shown = calloc(n + 1, sizeof(char *));
    const struct cli_stack **ranked = calloc(n + 1, sizeof(*ranked));
    for (size_t i = 0; i < n; i++) {
        const struct cli_stack *s = &p->stacks[lk[i].stack];
        fprintf(out, "#%-3zu live %s in %s %s; oldest %s old, mean age %s\n", i + 1,
                cli_fmt_bytes(s->live_bytes, a, sizeof(a)), cli_fmt_count(s->live_objects, b, sizeof(b)),
                noun(s->live_objects, "object", "objects"),
                cli_fmt_duration(lk[i].oldest_age_s, c, sizeof(c)), cli_fmt_duration(lk[i].mean_age_s, d, sizeof(d)));
        print_frames(s, out);
        if (shown && ranked && (shown[i] = shown_frames(s))) {
            ranked[i] = s;
            print_same_as(shown, i, s, ranked, out);
        }
    }
    for (size_t i = 0; shown && i < n; i++)
        free(shown[i]);
    free(shown);
    free(ranked);
    fputc('\n', out);

    n = ng < top ? ng : top;
    if (!ng) {
        fprintf(out, "Growing: no stack's live bytes rose steadily over its recent history%s.\n\n",
                p->duration_s < 3 ? " (the session was short: profile for longer)" : "");
    } else {
        fprintf(out, "Growing: %zu %s whose live bytes rose steadily over the last ticks; top %zu by rate:\n",
                ng, noun((double)ng, "stack", "stacks"), n);
        for (size_t i = 0; i < n; i++) {
            const struct cli_stack *s = &p->stacks[gr[i].stack];
            fprintf(out, "#%-3zu +%s/%s (from %s to %s over %u points)\n", i + 1,
                    cli_fmt_bytes(gr[i].per_s, a, sizeof(a)), p->tick_ms ? "s" : "tick",
                    cli_fmt_bytes(gr[i].first, b, sizeof(b)), cli_fmt_bytes(gr[i].last, c, sizeof(c)), gr[i].points);
            print_frames(s, out);
        }
        fputc('\n', out);
    }
    cli_leaks_views_free(&v);
    return 0;
}

/* The group's name, made safe for a terminal (paths and names come from
 * the target). */
static const char *group_label(enum cli_view by, const struct cli_group *g, char *buf, size_t len)
{
    char raw[1024];
    if (by == CLI_VIEW_FUNCTION && g->module)
        snprintf(raw, sizeof(raw), "%s  (%s)", g->name, cli_paths_basename(g->module));
    else if (by == CLI_VIEW_THREAD && strncmp(g->name, "tid ", 4))
        snprintf(raw, sizeof(raw), "%s  (tid %d)", g->name, (int)g->tid);
    else if (by == CLI_VIEW_PROCESS && strncmp(g->name, "pid ", 4))
        snprintf(raw, sizeof(raw), "%s  (pid %d)", g->name, (int)g->pid);
    else
        snprintf(raw, sizeof(raw), "%s", g->name);
    return cli_fmt_printable(raw, buf, len);
}

/* The --by table: one row per group, ranked (cli_view_build). A thread
 * view has no cumulative columns: a stack has one first-sampling thread. */
static int print_view(const struct cli_profile *p, const struct cli_report_options *opt, unsigned top, FILE *out)
{
    static const char *const plural[] = {
        [CLI_VIEW_FUNCTION] = "functions", [CLI_VIEW_MODULE] = "modules", [CLI_VIEW_THREAD] = "threads",
        [CLI_VIEW_PROCESS] = "processes",
    };
    static const char *const column[] = {
        [CLI_VIEW_FUNCTION] = "function", [CLI_VIEW_MODULE] = "module",
        [CLI_VIEW_THREAD] = "thread", [CLI_VIEW_PROCESS] = "process",
    };
    struct cli_view_result r;
    enum cli_view by = opt->by;
    bool cum = by != CLI_VIEW_THREAD && by != CLI_VIEW_PROCESS; /* one group per stack */
    int rc = cli_view_build(p, by, opt->leaks, &r);
    if (rc < 0)
        return rc;
    if (!r.n) { /* only with --leaks: every sampled block was freed */
        fprintf(out, "Leak candidates by %s: none, no stack holds sampled blocks that are still live.\n\n",
                cli_view_name(by));
        cli_view_free(&r);
        return 0;
    }
    size_t n = r.n < top ? r.n : top;
    fprintf(out, "%s%zu %s; top %zu by %s bytes (estimated; %s):\n", opt->leaks ? "Leak candidates by " : "", r.n,
            r.n == 1 ? column[by] : plural[by], n, r.by_alloc ? "allocated" : "live",
            cum ? "flat: in the innermost frame, which called the allocator; cum: anywhere in the stack"
                : by == CLI_VIEW_PROCESS ? "each stack counts for its process"
                                         : "each stack counts for the thread that made its first sample");
    if (cum)
        fprintf(out, "%-4s %10s %6s %8s %10s %6s %10s %6s %10s  %s\n", "#", "live", "live%", "objects", "cum live", "cum%",
                "alloc", "alloc%", "cum alloc", column[by]);
    else
        fprintf(out, "%-4s %10s %6s %8s %10s %6s  %s\n", "#", "live", "live%", "objects", "alloc", "alloc%", column[by]);
    for (size_t i = 0; i < n; i++) {
        const struct cli_group *g = &r.groups[i];
        char a[32], b[32], c[32], d[32], e[32], label[1024];
        group_label(by, g, label, sizeof(label));
        if (cum)
            fprintf(out, "%-4zu %10s %5.1f%% %8s %10s %5.1f%% %10s %5.1f%% %10s  %s\n", i + 1,
                    cli_fmt_bytes(g->live_bytes, a, sizeof(a)), pct(g->live_bytes, r.total_live_bytes),
                    cli_fmt_count(g->live_objects, b, sizeof(b)), cli_fmt_bytes(g->cum_live_bytes, c, sizeof(c)),
                    pct(g->cum_live_bytes, r.total_live_bytes), cli_fmt_bytes(g->alloc_bytes, d, sizeof(d)),
                    pct(g->alloc_bytes, r.total_alloc_bytes), cli_fmt_bytes(g->cum_alloc_bytes, e, sizeof(e)), label);
        else
            fprintf(out, "%-4zu %10s %5.1f%% %8s %10s %5.1f%%  %s\n", i + 1, cli_fmt_bytes(g->live_bytes, a, sizeof(a)),
                    pct(g->live_bytes, r.total_live_bytes), cli_fmt_count(g->live_objects, b, sizeof(b)),
                    cli_fmt_bytes(g->alloc_bytes, d, sizeof(d)), pct(g->alloc_bytes, r.total_alloc_bytes), label);
    }
    if (r.n > n)
        fprintf(out, "(%zu more %s: --top N shows more)\n", r.n - n, r.n - n == 1 ? column[by] : plural[by]);
    fputc('\n', out);
    cli_view_free(&r);
    return 0;
}

/* The target's children, largest first, and how to profile one: a
 * postmaster, an nginx master or a gunicorn arbiter sits idle while its
 * children allocate, and sampling the parent longer or more often would
 * not find their memory. */
static void print_children(const struct cli_profile *p, const struct cli_children *c, FILE *out)
{
    char a[32];
    fprintf(out, "pid %d has %zu child %s, holding %s of RSS together; a server's master process often\n"
                 "sits idle while its children do the work, and their allocations are not in this profile:\n",
            (int)p->pid, c->count, c->count == 1 ? "process" : "processes", cli_fmt_bytes((double)c->total_rss, a, sizeof(a)));
    for (size_t i = 0; i < c->nlisted; i++)
        fprintf(out, "  pid %-8d RSS %10s  %s\n", (int)c->listed[i].pid,
                cli_fmt_bytes((double)c->listed[i].rss, a, sizeof(a)), c->listed[i].comm);
    if (c->count > c->nlisted)
        fprintf(out, "  (%zu more, smaller)\n", c->count - c->nlisted);
    if (c->forked_during_session)
        fprintf(out, "%zu of them started during the session: they inherited the hooks but have no profiler of their own.\n",
                c->forked_during_session);
    char cmd[512];
    fprintf(out, "Profile a child on its own: heapinject -p %d; all of them and pid %d in one report:\n  %s\n",
            (int)c->listed[0].pid, (int)p->pid, cli_report_children_command(p->pid, p->duration_s, cmd, sizeof(cmd)));
}

/* Why there is no stack, as the exact counts tell it: the hint to sample
 * more often only when the process really allocated less than one
 * sampling interval, and a process with children told about them
 * instead (they, not the parent, are what to profile then). */
static void print_no_samples(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    char a[32], b[32], c[32];
    const struct hi_totals *t = &p->totals;
    if (opt->children && opt->children->nlisted && t->exact_alloc_bytes < p->rate) {
        fprintf(out, "No allocation was sampled: pid %d allocated %s in %s calls since attach (exact).\n", (int)p->pid,
                cli_fmt_bytes((double)t->exact_alloc_bytes, a, sizeof(a)),
                cli_fmt_count((double)t->exact_alloc_calls, b, sizeof(b)));
        print_children(p, opt->children, out);
    } else if (t->exact_alloc_calls == 0) {
        fprintf(out, "No allocation was sampled: no call reached the hooked malloc family since attach (exact count).\n"
                     "Whatever this process holds was allocated before attach, or through something heapinject\n"
                     "does not hook (direct mmap, a runtime's own heap, a statically linked allocator): the\n"
                     "memory breakdown above shows where the resident bytes are.\n");
    } else if (t->exact_alloc_bytes < p->rate) {
        fprintf(out, "No allocation was sampled. The process allocated %s in %s calls since attach (exact),\n"
                     "less than one sampling interval (%s). Profile for longer (--duration) or sample more\n"
                     "often (--rate, e.g. --rate 4K).\n",
                cli_fmt_bytes((double)t->exact_alloc_bytes, a, sizeof(a)),
                cli_fmt_count((double)t->exact_alloc_calls, b, sizeof(b)), cli_fmt_bytes((double)p->rate, c, sizeof(c)));
    } else {
        fprintf(out, "No allocation was sampled although the process allocated %s in %s calls since attach (exact);\n"
                     "the sampler missed them by chance. Sample more often (--rate, e.g. --rate 4K).\n",
                cli_fmt_bytes((double)t->exact_alloc_bytes, a, sizeof(a)),
                cli_fmt_count((double)t->exact_alloc_calls, b, sizeof(b)));
    }
}

/* One line per module whose frames lack file:line for want of debug
 * information, naming what would give it (cli/symbolize/debughint.h). */
static void print_debug_hints(const struct cli_profile *p, FILE *out)
{
    if (!p->ndebug_hints)
        return;
    fprintf(out, "Debug information missing: the frames of %zu %s in these stacks lack file:line:\n",
            p->ndebug_hints, p->ndebug_hints == 1 ? "module" : "modules");
    cli_debughint_prefetch(p->debug_hints, p->ndebug_hints);
    for (size_t i = 0; i < p->ndebug_hints; i++) {
        char line[1024], raw[1400], safe[1400];
        snprintf(raw, sizeof(raw), "%s: %s", cli_paths_basename(p->debug_hints[i].module),
                 cli_debughint_line(&p->debug_hints[i], line, sizeof(line)));
        fprintf(out, "  %s\n", cli_fmt_printable(raw, safe, sizeof(safe)));
    }
    fputc('\n', out);
}

int cli_report_text(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    unsigned top = opt->top ? opt->top : CLI_REPORT_DEFAULT_TOP;

    print_header(p, opt, out);
    cli_report_processes_table(p, out);
    if (!p->nstacks) {
        if (opt->target_exit && !opt->target_exit->stacks)
            fprintf(out, "No stacks: the process exited before heapinject's first snapshot of it.\n");
        else
            print_no_samples(p, opt, out);
        return ferror(out) ? -EIO : 0;
    }
    /* A process with children: the stacks below are only its own, never
     * silently (issue 28). */
    if (opt->children && opt->children->nlisted) {
        print_children(p, opt->children, out);
        fputc('\n', out);
    }
    if (opt->by != CLI_VIEW_STACK) {
        int rc = print_view(p, opt, top, out);
        print_debug_hints(p, out);
        return rc < 0 ? rc : ferror(out) ? -EIO : 0;
    }
    if (opt->leaks) {
        if (print_leaks(p, top, out) < 0)
            return -ENOMEM;
    } else {
        print_stacks(p, top, out);
    }
    double live = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        live += p->stacks[i].live_bytes;
    /* Nothing live (all freed, a pure churn workload): rank by allocation. */
    if (print_functions(p, top, live <= 0 && !opt->leaks, out) < 0)
        return -ENOMEM;
    print_debug_hints(p, out);
    return ferror(out) ? -EIO : 0;
}
