/* text.c - the memory breakdown as text (reports and `status`). */
#include <inttypes.h>
#include <string.h>

#include "cli/util/fmt.h"
#include "cli/memory/report.h"
#include "cli/report/formats.h"
#include "cli/census/precheck.h"

static const char *const part_label[CLI_MEM_NPARTS] = {
    [CLI_MEM_HEAP_IN_USE] = "heap in use", [CLI_MEM_HEAP_FREE] = "heap free",
    [CLI_MEM_HEAP_UNSPLIT] = "heap", [CLI_MEM_MMAP] = "mmap", [CLI_MEM_STACKS] = "stacks",
    [CLI_MEM_FILES] = "files", [CLI_MEM_OTHER] = "other", [CLI_MEM_UNPLACED] = "unplaced",
};

static const char *part_what(const struct cli_memory *m, int i)
{
    switch (i) {
    case CLI_MEM_HEAP_IN_USE: return "blocks the allocator handed out (its count), resident";
    case CLI_MEM_HEAP_FREE: return "resident memory the allocator holds but has not handed out";
    case CLI_MEM_HEAP_UNSPLIT: return "the allocator's memory (in use and free unknown)";
    case CLI_MEM_MMAP: return "anonymous mappings that are not the allocator's (direct mmap, runtime heaps)";
    case CLI_MEM_STACKS: return "thread stacks";
    case CLI_MEM_FILES: return m->nmodules ? "code and data of modules:" : "code and data of modules";
    case CLI_MEM_OTHER: return "shared memory, vdso, ...";
    case CLI_MEM_UNPLACED: return "anonymous memory, allocator's or mmap: cannot be told";
    default: return "";
    }
}

static void alloc_line(const struct cli_memory *m, const char *ind, FILE *out)
{
    const struct hi_alloc_stats *s = &m->alloc;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    const char *name = cli_memory_allocator_name(s->allocator);
    char mod[256], why[4 * sizeof(s->why)]; /* the target's names, made safe for a terminal */
    cli_fmt_printable(m->alloc_module[0] ? cli_paths_basename(m->alloc_module) : "", mod, sizeof(mod));
    if (s->status < 0) {
        fprintf(out, "%sallocator: %s%s%s: its figures could not be read: %s\n", ind, name,
                mod[0] ? " in " : "", mod, cli_fmt_printable(s->why, why, sizeof(why)));
        return;
    }
    fprintf(out, "%sallocator: %s (%s), its own figures, read in %.2f ms:\n", ind, name, mod[0] ? mod : "?",
            (double)s->read_ns / 1e6);
    switch (s->allocator) {
    case HI_ALLOC_GLIBC:
        fprintf(out, "%s  mallinfo2: in use %s (mmapped blocks %s), free in arenas %s (releasable at the top %s), "
                     "mapped %s, %u arena%s found in the maps\n",
                ind, cli_fmt_bytes((double)s->in_use, a, sizeof(a)), cli_fmt_bytes((double)s->mmapped, b, sizeof(b)),
                cli_fmt_bytes((double)s->free, c, sizeof(c)), cli_fmt_bytes((double)s->releasable, d, sizeof(d)),
                cli_fmt_bytes((double)s->mapped, e, sizeof(e)), m->glibc_arenas, m->glibc_arenas == 1 ? "" : "s");
        fprintf(out, "%s  smaps: the allocator's mappings hold %s resident; mallinfo2's free counts mapped "
                     "bytes, resident or not\n", ind, cli_fmt_bytes((double)m->heap_smaps_rss, a, sizeof(a)));
        break;
    case HI_ALLOC_JEMALLOC:
        fprintf(out, "%s  allocated %s, active %s, resident %s, mapped %s, retained %s (virtual), metadata %s, "
                     "%u arenas\n", ind, cli_fmt_bytes((double)s->in_use, a, sizeof(a)),
                cli_fmt_bytes((double)s->active, b, sizeof(b)), cli_fmt_bytes((double)s->resident, c, sizeof(c)),
                cli_fmt_bytes((double)s->mapped, d, sizeof(d)), cli_fmt_bytes((double)s->retained, e, sizeof(e)),
                cli_fmt_bytes((double)s->metadata, f, sizeof(f)), s->arenas);
        break;
    case HI_ALLOC_TCMALLOC:
        fprintf(out, "%s  allocated %s, heap size %s, free %s (of which caches %s), released to the OS %s, "
                     "physical %s\n", ind, cli_fmt_bytes((double)s->in_use, a, sizeof(a)),
                cli_fmt_bytes((double)s->mapped, b, sizeof(b)), cli_fmt_bytes((double)s->free, c, sizeof(c)),
                cli_fmt_bytes((double)s->caches, d, sizeof(d)), cli_fmt_bytes((double)s->unmapped, e, sizeof(e)),
                cli_fmt_bytes((double)s->resident, f, sizeof(f)));
        break;
    case HI_ALLOC_MIMALLOC:
        fprintf(out, "%s  committed %s (mimalloc keeps no in-use total outside its statistics build)\n", ind,
                cli_fmt_bytes((double)s->mapped, a, sizeof(a)));
        break;
    default: break;
    }
}

/* Without an agent, the allocator a non-glibc process calls (found from
 * its malloc slots: collect.c), or NULL: its in use and free are unknown,
 * not 0. */
static const char *unread_allocator(const struct cli_memory *m)
{
    if (m->have_alloc || !m->alloc_module[0])
        return NULL;
    return cli_census_allocator_of(m->alloc_module);
}

/* jemalloc's fragmentation: free space inside the pages its size classes
 * hold (active - allocated; active / allocated is redis's
 * allocator_frag_ratio). A purge cannot return it: only pages with no
 * block in them go back. */
static void jemalloc_frag_line(const struct hi_alloc_stats *s, const char *ind, FILE *out)
{
    char a[32];
    if (!(s->fields & HI_AF_ACTIVE) || !(s->fields & HI_AF_IN_USE) || s->active < s->in_use || !s->in_use)
        return;
    fprintf(out, "%s  fragmentation %s (active - allocated; ratio %.2f, redis's allocator_frag_ratio): free space "
                 "inside pages that hold blocks, which no purge or trim returns\n",
            ind, cli_fmt_bytes((double)(s->active - s->in_use), a, sizeof(a)), (double)s->active / (double)s->in_use);
}

void cli_memory_write_text(const struct cli_memory *m, const char *ind, FILE *out)
{
    char a[32], b[32], name[256], note[2048];
    if (!m || !m->valid)
        return;
    uint64_t sum = 0;
    for (int i = 0; i < CLI_MEM_NPARTS; i++)
        sum += m->parts[i];
    fprintf(out, "%sMemory: RSS %s, by holder (resident bytes from /proc/%d/smaps, read in %.0f ms):\n", ind,
            cli_fmt_bytes((double)m->rss, a, sizeof(a)), m->pid, m->read_ms);
    for (int i = 0; i < CLI_MEM_NPARTS; i++) {
        bool always = i == CLI_MEM_HEAP_IN_USE || i == CLI_MEM_HEAP_FREE || i == CLI_MEM_MMAP ||
                      i == CLI_MEM_STACKS || i == CLI_MEM_FILES || i == CLI_MEM_OTHER;
        if (!always && !m->parts[i])
            continue;
        if ((i == CLI_MEM_HEAP_IN_USE || i == CLI_MEM_HEAP_FREE) && m->parts[CLI_MEM_HEAP_UNSPLIT] &&
            !m->parts[i])
            continue;
        const char *unread = unread_allocator(m);
        if ((i == CLI_MEM_HEAP_IN_USE || i == CLI_MEM_HEAP_FREE) && unread && !m->parts[i]) {
            fprintf(out, "%s  %-12s %10s %6s  %s's own count, read only with a profiler attached\n", ind,
                    part_label[i], "unknown", "", unread);
            continue;
        }
        char what[160];
        if (i == CLI_MEM_HEAP_UNSPLIT && m->musl)
            snprintf(what, sizeof(what), "musl's malloc: [heap] and anonymous mappings (in use and free unknown; "
                                         "a direct mmap of the program's is among them)");
        else if (i == CLI_MEM_UNPLACED && unread)
            snprintf(what, sizeof(what), "anonymous memory, %s's heap or mmap: not told apart without a profiler", unread);
        else
            snprintf(what, sizeof(what), "%s", part_what(m, i));
        fprintf(out, "%s  %-12s %10s %5.1f%%  %s", ind, part_label[i], cli_fmt_bytes((double)m->parts[i], a, sizeof(a)),
                m->rss ? 100.0 * (double)m->parts[i] / (double)m->rss : 0.0, what);
        if (i == CLI_MEM_FILES)
            for (size_t k = 0; k < m->ntop; k++)
                fprintf(out, "%s %s %s", k ? "," : "",
                        cli_fmt_printable(cli_paths_basename(m->top[k].path), name, sizeof(name)),
                        cli_fmt_bytes((double)m->top[k].rss, b, sizeof(b)));
        if (i == CLI_MEM_FILES && m->nmodules > m->ntop)
            fprintf(out, ", %zu more", m->nmodules - m->ntop);
        fputc('\n', out);
    }
    if (sum != m->rss)
        fprintf(out, "%s  (parts add up to %s)\n", ind, cli_fmt_bytes((double)sum, a, sizeof(a)));
    if (m->have_alloc) {
        alloc_line(m, ind, out);
        if (m->alloc.status == 0 && m->alloc.allocator == HI_ALLOC_JEMALLOC)
            jemalloc_frag_line(&m->alloc, ind, out);
    } else if (m->musl) {
        fprintf(out, "%sallocator: musl's malloc (%s); heapinject reads no figures of it and cannot profile a musl "
                     "process\n", ind,
                m->alloc_module[0] ? cli_fmt_printable(cli_paths_basename(m->alloc_module), name, sizeof(name))
                                   : "linked into the executable");
    } else if (unread_allocator(m)) {
        fprintf(out, "%sallocator: %s (%s, whose code the process's malloc slots point into); its figures (in use, "
                     "free, fragmentation) are read by a profiler inside the process: 'heapinject attach -p %d', "
                     "then status\n",
                ind, unread_allocator(m), cli_fmt_printable(cli_paths_basename(m->alloc_module), name, sizeof(name)),
                m->pid);
    }
    for (size_t i = 0; i < m->nnotes; i++) /* notes may quote a module's name */
        fprintf(out, "%sNote: %s.\n", ind, cli_fmt_printable(m->notes[i], note, sizeof(note)));
}
