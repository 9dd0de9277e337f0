/* collect.c - one memory breakdown for a profile or a status: the
 * allocator's figures from the agent, smaps from /proc, then the notes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string.h>

#include "cli/link/memory_collect.h"
#include "cli/memory/payload_tables.h"
#include "cli/util/fmt.h"
#include "cli/process/proc.h"
#include "cli/process/slots.h"

/* musl's malloc (dynamic: its libc is mapped; static: the executable
 * defines musl's own malloc entry points) takes its memory with brk and
 * mmap alike, and no agent can read its figures (heapinject refuses musl
 * processes): everything anonymous but stacks is counted as its heap, in
 * use and free not told apart, a direct mmap of the program's among it.
 * Before, a dynamic one showed its heap as "mmap ... not the allocator's"
 * and a static one as heap beside a note that it was under mmap. */
static void musl_heap(pid_t pid, struct cli_memory *m)
{
    char path[256];
    bool dynamic = cli_proc_musl(pid, path, sizeof(path));
    if (!dynamic && !strstr(m->exe_alloc, "musl"))
        return;
    m->musl = true;
    if (dynamic)
        snprintf(m->alloc_module, sizeof(m->alloc_module), "%s", path);
    m->exe_alloc[0] = '\0'; /* musl, not an unknown allocator: no note for it */
    m->parts[CLI_MEM_HEAP_UNSPLIT] += m->parts[CLI_MEM_HEAP_IN_USE] + m->parts[CLI_MEM_HEAP_FREE] +
                                      m->parts[CLI_MEM_MMAP] + m->parts[CLI_MEM_UNPLACED];
    m->parts[CLI_MEM_HEAP_IN_USE] = m->parts[CLI_MEM_HEAP_FREE] = 0;
    m->parts[CLI_MEM_MMAP] = m->parts[CLI_MEM_UNPLACED] = 0;
}

/* heapinject's own tables are no memory of the program's: taken out of
 * mmap (or unplaced) and counted under other, with a note. A fork child
 * of a profiled process inherits them and has no agent to say so; the
 * parent's agent reports them as 'profiler memory', not in the split. */
static void payload_tables(pid_t pid, bool have, struct cli_memory *m)
{
    char a[32];
    uint64_t t = cli_memory_payload_tables(pid), moved = 0;
    static const int from[] = { CLI_MEM_MMAP, CLI_MEM_UNPLACED };
    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]) && moved < t; i++) {
        uint64_t take = m->parts[from[i]] < t - moved ? m->parts[from[i]] : t - moved;
        m->parts[from[i]] -= take;
        moved += take;
    }
    if (!moved)
        return;
    m->parts[CLI_MEM_OTHER] += moved;
    if (have)
        cli_memory_note(m, "%s resident are heapinject's own tables: counted under other, not as the program's mmap",
                        cli_fmt_bytes((double)moved, a, sizeof(a)));
    else
        cli_memory_note(m, "%s resident are heapinject's tables inherited from a parent that was being profiled when "
                           "it forked (this process has no profiler of its own): counted under other, not as the "
                           "program's mmap",
                        cli_fmt_bytes((double)moved, a, sizeof(a)));
}

struct cli_memory *cli_memory_collect(pid_t pid, struct cli_client *c, const struct cli_profile *p)
{
    struct hi_alloc_stats st;
    bool have = false;
    if (c && c->fd >= 0 && !c->broken)
        have = cli_client_alloc_stats(c, &st) == 0;
    struct cli_memory *m = malloc(sizeof(*m));
    if (!m)
        return NULL;
    if (cli_memory_read(pid, have ? &st : NULL, m) < 0) {
        free(m);
        return NULL;
    }
    /* No agent to ask: whose malloc the process calls, read from outside
     * as the census's precheck does (the module its bound malloc slots
     * point into), so that the text can name the allocator whose figures
     * are unknown. */
    if (!have && !m->alloc_module[0]) {
        char path[4096];
        if (cli_slots_malloc_module(pid, path, sizeof(path)) == 1)
            snprintf(m->alloc_module, sizeof(m->alloc_module), "%.255s", path);
    }
    payload_tables(pid, have, m);
    musl_heap(pid, m);
    cli_memory_add_notes(m, p);
    return m;
}

void cli_memory_destroy(struct cli_memory *m)
{
    if (!m)
        return;
    cli_memory_free(m);
    free(m);
}
