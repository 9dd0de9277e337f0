/* json.c - the "memory" object of the JSON report and of `status --format
 * json` (docs/JSON.md). */
#include <inttypes.h>
#include <string.h>

#include "cli/memory/report.h"
#include "cli/census/precheck.h"
#include "cli/report/report.h"


static void field(FILE *out, const char *key, uint64_t v, uint32_t have, uint32_t bit)
{
    if (have & bit)
        fprintf(out, ", \"%s\": %" PRIu64, key, v);
}

void cli_memory_write_json(const struct cli_memory *m, const char *ind, FILE *out)
{
    if (!m || !m->valid) {
        fprintf(out, "null");
        return;
    }
    fprintf(out, "{\"rss_bytes\": %" PRIu64 ", \"source\": \"/proc/%d/smaps\", \"read_ms\": %.3f,\n", m->rss, m->pid,
            m->read_ms);
    fprintf(out, "%s  \"parts\": {", ind);
    for (int i = 0; i < CLI_MEM_NPARTS; i++)
        fprintf(out, "%s\"%s\": %" PRIu64, i ? ", " : "", cli_memory_part_key(i), m->parts[i]);
    fprintf(out, "},\n%s  \"modules\": %zu, \"files_top\": [", ind, m->nmodules);
    for (size_t i = 0; i < m->ntop; i++) {
        fprintf(out, "%s{\"module\": ", i ? ", " : "");
        cli_json_write_str(out, m->top[i].path);
        fprintf(out, ", \"rss_bytes\": %" PRIu64 "}", m->top[i].rss);
    }
    fprintf(out, "],\n%s  \"heap_smaps_rss\": %" PRIu64 ", \"heap_mmapped_rss\": %" PRIu64
                 ", \"untouched_bytes\": %" PRIu64 ", \"mmap_dontfork_bytes\": %" PRIu64 ",\n",
            ind, m->heap_smaps_rss, m->heap_mmapped_rss, m->untouched, m->mmap_dontfork);
    fprintf(out, "%s  \"allocator\": ", ind);
    if (!m->have_alloc) {
        fprintf(out, "{\"name\": \"unknown\", \"readable\": false, \"why\": \"no profiler attached\"");
        /* found from outside (collect.c): which allocator's figures are unknown */
        const char *seen = m->musl ? "musl" : m->alloc_module[0] ? cli_census_allocator_of(m->alloc_module) : NULL;
        if (seen) {
            fprintf(out, ", \"detected\": \"%s\", \"module\": ", seen);
            cli_json_write_str(out, m->alloc_module[0] ? m->alloc_module : NULL);
        }
        fputc('}', out);
    } else {
        const struct hi_alloc_stats *s = &m->alloc;
        fprintf(out, "{\"name\": \"%s\", \"module\": ", cli_memory_allocator_name(s->allocator));
        cli_json_write_str(out, m->alloc_module);
        fprintf(out, ", \"readable\": %s", s->status == 0 ? "true" : "false");
        if (s->status < 0) {
            fprintf(out, ", \"why\": ");
            cli_json_write_str(out, s->why);
        } else {
            fprintf(out, ", \"read_ns\": %" PRIu64, s->read_ns);
            field(out, "in_use_bytes", s->in_use, s->fields, HI_AF_IN_USE);
            field(out, "free_bytes", s->free, s->fields, HI_AF_FREE);
            field(out, "releasable_bytes", s->releasable, s->fields, HI_AF_RELEASABLE);
            field(out, "mmapped_bytes", s->mmapped, s->fields, HI_AF_MMAPPED);
            field(out, "mapped_bytes", s->mapped, s->fields, HI_AF_MAPPED);
            field(out, "resident_bytes", s->resident, s->fields, HI_AF_RESIDENT);
            field(out, "active_bytes", s->active, s->fields, HI_AF_ACTIVE);
            field(out, "retained_bytes", s->retained, s->fields, HI_AF_RETAINED);
            field(out, "metadata_bytes", s->metadata, s->fields, HI_AF_METADATA);
            field(out, "unmapped_bytes", s->unmapped, s->fields, HI_AF_UNMAPPED);
            field(out, "cache_free_bytes", s->caches, s->fields, HI_AF_CACHES);
            field(out, "arenas", s->arenas, s->fields, HI_AF_ARENAS);
            if (s->allocator == HI_ALLOC_GLIBC)
                fprintf(out, ", \"arenas\": %u", m->glibc_arenas);
        }
        fputc('}', out);
    }
    fprintf(out, ",\n%s  \"notes\": [", ind);
    for (size_t i = 0; i < m->nnotes; i++) {
        fprintf(out, "%s\n%s    ", i ? "," : "", ind);
        cli_json_write_str(out, m->notes[i]);
    }
    fprintf(out, "%s]}", m->nnotes ? "\n  " : "");
}
