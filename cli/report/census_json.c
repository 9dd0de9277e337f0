/* json.c - the census as JSON (docs/JSON.md, "census"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/census/views.h"
#include "cli/report/report.h"


static void preview(FILE *out, const uint8_t *p, uint64_t len)
{
    fputc('"', out);
    for (uint64_t i = 0; p && i < len; i++)
        fprintf(out, "%02x", p[i]);
    fputc('"', out);
}

/* Writes the view's first `top` rows; returns how many it has in all. */
static size_t view(FILE *out, const struct cli_census *c, enum cli_census_view v, unsigned top)
{
    struct cli_census_row *r = NULL;
    size_t n = 0, all = 0;
    fputc('[', out);
    if (cli_census_view(c, v, &r, &n) == 0) {
        for (size_t i = 0; i < n && i < top; i++) {
            const struct cli_census_row *x = &r[i];
            fputs(i ? ",\n    {" : "\n    {", out);
            if (v == CLI_CENSUS_UNREACHABLE) {
                fputs("\"type\": ", out);
                cli_json_write_str(out, x->type);
                fprintf(out, ", \"size\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64
                             ", \"preview\": ",
                        x->size, x->unreachable_blocks, x->unreachable_bytes);
                preview(out, x->preview, x->preview_len);
            } else if (v == CLI_CENSUS_BY_TYPE) {
                fputs("\"type\": ", out);
                cli_json_write_str(out, x->type);
                fprintf(out, ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"unreachable_blocks\": %" PRIu64
                             ", \"unreachable_bytes\": %" PRIu64 ", \"since_attach_blocks\": %" PRIu64
                             ", \"since_attach_bytes\": %" PRIu64 ", \"since_attach_stack\": ",
                        x->blocks, x->bytes, x->unreachable_blocks, x->unreachable_bytes, x->since_attach_blocks,
                        x->since_attach_bytes);
                cli_json_write_str(out, x->since_attach_stack);
                fprintf(out, ", \"since_attach_stack_bytes\": %" PRIu64, x->since_attach_stack_bytes);
            } else {
                fprintf(out, "\"size\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64
                             ", \"unreachable_blocks\": %" PRIu64 ", \"since_attach_blocks\": %" PRIu64
                             ", \"since_attach_bytes\": %" PRIu64 ", \"preview\": ",
                        x->size, x->blocks, x->bytes, x->unreachable_blocks, x->since_attach_blocks,
                        x->since_attach_bytes);
                preview(out, x->preview, x->preview_len);
                fputs(", \"since_attach_stack\": ", out);
                cli_json_write_str(out, x->since_attach_stack);
                fprintf(out, ", \"since_attach_stack_bytes\": %" PRIu64, x->since_attach_stack_bytes);
            }
            fputc('}', out);
        }
        free(r);
        all = cli_census_view_total(c, v, n);
    }
    fputc(']', out);
    return all;
}

static const char *kind_name(uint32_t k)
{
    switch (k) {
    case HI_ROOT_GLOBAL: return "global";
    case HI_ROOT_STACK: return "stack";
    case HI_ROOT_TLS: return "tls";
    case HI_ROOT_REGISTER: return "register";
    case HI_ROOT_UNCOPIED: return "uncopied";
    case HI_ROOT_KERNEL: return "kernel";
    case HI_ROOT_SHARED: return "shared";
    default: return "mapping";
    }
}

static int cmp_root(const void *x, const void *y)
{
    const struct hi_census_root *a = *(const struct hi_census_root *const *)x;
    const struct hi_census_root *b = *(const struct hi_census_root *const *)y;
    return a->retained_bytes == b->retained_bytes ? 0 : a->retained_bytes < b->retained_bytes ? 1 : -1;
}

void cli_census_write_json_body(FILE *out, const struct cli_census *c, unsigned top)
{
    const struct hi_census_end *e = &c->end;
    fprintf(out, "{\n  \"allocator\": \"glibc\", \"arenas\": %u, \"heaps\": %u,\n", e->arenas, e->heaps);
    double fork_ms = (double)e->stall_ns / 1e6;
    fprintf(out, "  \"stall_ms\": %.3f, \"fork_ms\": %.3f, \"threads_held_ms\": %.3f, \"scan_ms\": %.3f, "
                 "\"wall_ms\": %.3f,\n",
            c->held_ms > fork_ms ? c->held_ms : fork_ms, fork_ms, c->held_ms, (double)e->scan_ns / 1e6, c->wall_ms);
    const struct cli_census_cost *k = &c->cost;
    if (k->have) {
        fprintf(out, "  \"copy_cost\": {\"minor_faults\": %" PRIu64 ", \"window_ms\": %.3f, "
                     "\"usual_faults_per_s\": %.1f, \"copied_bytes_est\": %" PRIu64 ", \"predicted_bytes\": ",
                k->faults, k->window_ms, k->usual_per_s, k->copied_est);
        if (k->have_predicted)
            fprintf(out, "%" PRIu64 "},\n", k->predicted);
        else
            fprintf(out, "null},\n");
    } else {
        fprintf(out, "  \"copy_cost\": null,\n");
    }
    fprintf(out, "  \"in_use\": {\"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n", e->in_use_blocks,
            e->in_use_bytes);
    fprintf(out, "  \"free\": {\"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"tcache_blocks\": %" PRIu64
                 ", \"tcache_bytes\": %" PRIu64 ", \"fastbin_blocks\": %" PRIu64 ", \"fastbin_bytes\": %" PRIu64
                 "},\n",
            e->free_blocks, e->free_bytes, e->tcache_blocks, e->tcache_bytes, e->fastbin_blocks, e->fastbin_bytes);
    fprintf(out, "  \"mmapped\": {\"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n", e->mmapped_blocks,
            e->mmapped_bytes);
    fprintf(out, "  \"metadata_bytes\": %" PRIu64 ", \"heap_bytes\": %" PRIu64 ", \"root_bytes\": %" PRIu64
                 ", \"root_untouched_bytes\": %" PRIu64 ", \"uncopied_bytes\": %" PRIu64
                 ", \"uncopied_unread_bytes\": %" PRIu64
                 ",\n  \"threads\": %u, \"threads_with_stack_pointer\": %u, \"threads_with_registers\": %u, "
                 "\"threads_with_tls\": %u,\n",
            e->metadata_bytes, e->heap_bytes, e->root_bytes, (uint64_t)e->untouched_mib << 20,
            (uint64_t)e->uncopied_mib << 20, (uint64_t)e->uncopied_missed_mib << 20, e->threads,
            e->threads_with_sp, e->threads_with_regs, e->tls_roots);
    fprintf(out, "  \"layout\": {\"source\": \"%s\", \"where\": ", e->layout_from_debuginfo ? "debuginfo" : "built-in");
    cli_json_write_str(out, c->layout_where);
    fprintf(out, ", \"main_arena\": %" PRIu64 "},\n", e->layout_from_debuginfo ? c->main_arena : 0);
    fprintf(out, "  \"glibc_mallinfo\": {\"free\": %" PRIu64 ", \"mmapped\": %" PRIu64 "},\n", e->mallinfo_free,
            e->mallinfo_mmapped);
    fprintf(out, "  \"unreachable\": {\"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"groups\": ",
            e->unreachable_blocks, e->unreachable_bytes);
    size_t n_unreachable = view(out, c, CLI_CENSUS_UNREACHABLE, top);
    fputs("},\n  \"types\": ", out);
    size_t n_types = view(out, c, CLI_CENSUS_BY_TYPE, top);
    fputs(",\n  \"sizes\": ", out);
    size_t n_sizes = view(out, c, CLI_CENSUS_BY_SIZE, top);
    fputs(",\n  \"roots\": [", out);
    const struct hi_census_root **o = calloc(c->nroots + 1, sizeof(*o));
    if (o) {
        for (size_t i = 0; i < c->nroots; i++)
            o[i] = &c->roots[i];
        qsort(o, c->nroots, sizeof(*o), cmp_root);
        for (size_t i = 0; i < c->nroots && i < top; i++) {
            size_t idx = (size_t)(o[i] - c->roots);
            fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
            cli_json_write_str(out, c->root_name ? c->root_name[idx] : NULL);
            fprintf(out, ", \"kind\": \"%s\", \"address\": %" PRIu64 ", \"retained_bytes\": %" PRIu64
                         ", \"retained_blocks\": %" PRIu64,
                    kind_name(o[i]->kind), o[i]->addr, o[i]->retained_bytes, o[i]->retained_blocks);
            if (c->root_via && c->root_via[idx]) {
                fputs(", \"via\": ", out);
                cli_json_write_str(out, c->root_via[idx]);
                fprintf(out, ", \"via_size\": %" PRIu64, o[i]->via_size);
            }
            if (o[i]->kind == HI_ROOT_STACK || o[i]->kind == HI_ROOT_TLS || o[i]->kind == HI_ROOT_REGISTER) {
                fprintf(out, ", \"tid\": %d, \"thread\": ", (int)o[i]->tid);
                cli_json_write_str(out, o[i]->thread);
            }
            fputc('}', out);
        }
        free(o);
    }
    /* What the text report says besides, so that `heapinject report`
     * renders it again from this file (cli/profile/read_census.c). */
    size_t n_roots = cli_census_roots_held(c);
    fprintf(out, "],\n  \"rows_total\": {\"unreachable\": %zu, \"types\": %zu, \"sizes\": %zu, \"roots\": %zu},\n",
            n_unreachable, n_types, n_sizes, n_roots);
    fprintf(out, "  \"fork_ns\": %" PRIu64 ", \"scan_ns\": %" PRIu64 ", \"threads_held_ns\": %.0f, \"wall_ns\": %.0f, "
                 "\"groups_dropped\": %u,\n  \"rss_before_bytes\": %" PRIu64 ", \"rss_after_bytes\": %" PRIu64
                 ", \"comm\": ",
            e->stall_ns, e->scan_ns, c->held_ms * 1e6, c->wall_ms * 1e6, e->groups_dropped, c->rss_before,
            c->rss_after);
    cli_json_write_str(out, c->comm);
    fputs(", \"registers_not_read_why\": ", out);
    cli_json_write_str(out, c->regs_why[0] ? c->regs_why : NULL);
    cli_census_write_python_json(out, c, top);
    fputs("\n }", out);
}

int cli_census_write_json(FILE *out, const struct cli_census *c, unsigned top)
{
    fprintf(out, "{\"pid\": %d, \"comm\": ", (int)c->pid);
    cli_json_write_str(out, c->comm);
    fputs(",\n \"census\": ", out);
    cli_census_write_json_body(out, c, top);
    fputs("\n}\n", out);
    return ferror(out) ? -1 : 0;
}
