/* notes.c - honest notes: what the sampled profile does not explain, and
 * who probably holds it. Numbers first, then the likely holder named from
 * the process's modules and what the user can do about it. */
#include <stdlib.h>
#include <string.h>

#include "cli/util/fmt.h"
#include "cli/memory/report.h"

static void holder_notes(struct cli_memory *m, bool grew)
{
    const char *why = grew ? "The growth is probably" : "Memory outside malloc is";
    if (m->python)
        cli_memory_note(m, "%s CPython's: small objects live in pymalloc arenas, 1 MiB anonymous mappings "
                           "counted under mmap (the arenas show as stacks of kind mmap, the objects in them do not); "
                           "start it with PYTHONMALLOC=malloc to see each object as a malloc call next time (or use "
                           "tracemalloc)", why);
    if (m->jvm)
        cli_memory_note(m, "%s the JVM's: the Java heap is the JVM's own (under mmap): ask it with "
                           "'jcmd %d GC.heap_info' or 'jcmd %d VM.native_memory'", why, m->pid, m->pid);
    if (m->node)
        cli_memory_note(m, "%s V8's: the JavaScript heap is V8's own (under mmap): start node with "
                           "--heapsnapshot-signal=SIGUSR2 and send it SIGUSR2 for a heap snapshot", why);
    if (m->go)
        cli_memory_note(m, "%s the Go runtime's: the Go heap is not malloc's; use the program's "
                           "runtime/pprof heap profile (net/http/pprof /debug/pprof/heap)", why);
}

void cli_memory_add_notes(struct cli_memory *m, const struct cli_profile *p)
{
    char a[32], b[32], c[32], d[32];
    if (!m->valid)
        return;
    if (m->have_alloc && m->alloc.status < 0)
        cli_memory_note(m, "the allocator's own figures could not be read (%s); the heap is %s",
                        m->alloc.why[0] ? m->alloc.why : "no reason given",
                        m->parts[CLI_MEM_HEAP_UNSPLIT] ? "shown as heap_unsplit (found in the maps, in use and free not told apart)"
                                                       : "not told apart from other anonymous memory (unplaced)");
    else if (!m->have_alloc && !m->musl) /* musl: the allocator line says no profiler can be */
        cli_memory_note(m, "no profiler connected to read the allocator's own figures: in use and free "
                           "are not told apart");
    if (m->untouched > (1u << 20) && m->untouched * 20 > m->rss)
        cli_memory_note(m, "the allocator counts %s in use that is not resident: blocks were allocated but their "
                           "pages never touched (the kernel gives a page on its first write)",
                        cli_fmt_bytes((double)m->untouched, a, sizeof(a)));
    uint64_t held = m->parts[CLI_MEM_HEAP_FREE];
    /* What a trim can give back. jemalloc's purge returns only pages with
     * no block in them (resident - active - metadata); its fragmentation
     * (active - allocated) stays, and is its own line (text.c). */
    if (m->have_alloc && m->alloc.status == 0 && m->alloc.allocator == HI_ALLOC_JEMALLOC &&
        (m->alloc.fields & HI_AF_ACTIVE) && (m->alloc.fields & HI_AF_RESIDENT)) {
        uint64_t kept = m->alloc.active + ((m->alloc.fields & HI_AF_METADATA) ? m->alloc.metadata : 0);
        uint64_t dirty = m->alloc.resident > kept ? m->alloc.resident - kept : 0;
        held = dirty < held ? dirty : held;
    }
    if (held > (16u << 20) && held * 4 > m->parts[CLI_MEM_HEAP_IN_USE] + held)
        cli_memory_note(m, "%s%s%s resident is free memory the allocator keeps (fragmentation, caches, an "
                           "unreturned top): not a leak; 'heapinject trim -p %d' asks it to give it back",
                        m->have_alloc ? cli_memory_allocator_name(m->alloc.allocator) : "", m->have_alloc ? ": " : "",
                        cli_fmt_bytes((double)held, a, sizeof(a)), m->pid);
    if (m->exe_alloc[0])
        cli_memory_note(m, "the executable has its own allocator linked in, %s: its heap is counted under mmap, "
                           "in use and free not told apart, and heapinject cannot profile it (its calls reach no "
                           "GOT slot); ask that allocator for its statistics",
                        m->exe_alloc);
    if (m->mmap_dontfork > (1u << 20))
        cli_memory_note(m, "%s under %s is in mappings marked MADV_DONTFORK (not copied into a child)%s",
                        cli_fmt_bytes((double)m->mmap_dontfork, a, sizeof(a)),
                        m->parts[CLI_MEM_UNPLACED] ? "unplaced" : "mmap",
                        m->node ? ": V8's heap and code, which node's runtime marks so" : ": a runtime's own heap, "
                                                                                       "or buffers a driver pins");
    if (!p) {
        /* Without a profile: who holds a large mmap part, when the modules say. */
        if (m->parts[CLI_MEM_MMAP] * 4 > m->rss && (m->python || m->jvm || m->node || m->go))
            holder_notes(m, false);
        return;
    }
    const struct hi_totals *t = &p->totals;
    if (t->est_live_bytes > m->rss && t->est_live_bytes > (4u << 20))
        cli_memory_note(m, "the live heap estimated since attach (%s) exceeds RSS (%s): blocks were allocated but "
                           "their pages never touched",
                        cli_fmt_bytes((double)t->est_live_bytes, a, sizeof(a)), cli_fmt_bytes((double)m->rss, b, sizeof(b)));
    /* RSS at the first tick of the session against now. */
    uint64_t start = 0;
    for (size_t i = 0; i < p->nticks && !start; i++)
        start = p->ticks[i].rss_bytes;
    bool grew = false;
    if (start && m->rss > start) {
        uint64_t delta = m->rss - start;
        double live = (double)t->est_live_bytes, mapped = 0;
        /* Direct mmap is sampled too (stacks of kind mmap): its live
         * mappings explain growth that malloc does not. */
        for (size_t i = 0; i < p->nstacks; i++)
            if (p->stacks[i].kind == HI_KIND_MMAP)
                mapped += p->stacks[i].live_bytes;
        if (delta > (4u << 20) && delta * 10 > start && live < (double)delta / 2) {
            grew = live + mapped < (double)delta / 2;
            char e[32];
            cli_memory_note(m, "RSS grew by %s during the session (%s -> %s); the live heap sampled since attach "
                               "explains %s (%.0f%%) and direct mmap sampled since attach %s (%.0f%%)%s",
                            cli_fmt_bytes((double)delta, a, sizeof(a)), cli_fmt_bytes((double)start, b, sizeof(b)),
                            cli_fmt_bytes((double)m->rss, c, sizeof(c)), cli_fmt_bytes(live, d, sizeof(d)),
                            100.0 * live / (double)delta, cli_fmt_bytes(mapped, e, sizeof(e)),
                            100.0 * mapped / (double)delta,
                            grew ? ": the rest was not allocated through the hooked functions"
                                 : ": the stacks of kind mmap below show who mapped it");
            /* Whoever mapped it, a runtime's own heap is the likely holder. */
            if (!grew && (m->python || m->jvm || m->node || m->go)) {
                holder_notes(m, true);
                return;
            }
        }
    }
    if (grew || m->parts[CLI_MEM_MMAP] * 4 > m->rss)
        holder_notes(m, grew);
}
