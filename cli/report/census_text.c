/* text.c - the census as text, for a person. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/link/census_freeze.h"
#include "cli/census/views.h"
#include "cli/util/fmt.h"

static void rows_of(FILE *out, const struct cli_census *c, enum cli_census_view v, unsigned top, const char *title,
                    const char *none)
{
    struct cli_census_row *r = NULL;
    size_t n = 0;
    char b1[32], b2[32], pv[160], name[512];
    if (cli_census_view(c, v, &r, &n) < 0) {
        fprintf(out, "\n%s: out of memory\n", title);
        return;
    }
    fprintf(out, "\n%s%s\n", title, n ? ":" : "");
    if (!n)
        fprintf(out, "  %s\n", none);
    for (size_t i = 0; i < n && i < top; i++) {
        const struct cli_census_row *x = &r[i];
        uint64_t bytes = v == CLI_CENSUS_UNREACHABLE ? x->unreachable_bytes : x->bytes;
        uint64_t blocks = v == CLI_CENSUS_UNREACHABLE ? x->unreachable_blocks : x->blocks;
        cli_fmt_printable(x->type ? x->type : "", name, sizeof(name));
        fprintf(out, "  %10s %10s %s", cli_fmt_bytes((double)bytes, b1, sizeof(b1)),
                cli_fmt_count((double)blocks, b2, sizeof(b2)), blocks == 1 ? "block " : "blocks");
        if (v != CLI_CENSUS_BY_TYPE)
            fprintf(out, " of %8" PRIu64 " B", x->size);
        if (x->type)
            fprintf(out, "  %s", name);
        if (v == CLI_CENSUS_BY_TYPE && x->unreachable_blocks)
            fprintf(out, "  (%s unreachable)", cli_fmt_bytes((double)x->unreachable_bytes, b1, sizeof(b1)));
        if (v != CLI_CENSUS_UNREACHABLE && x->since_attach_blocks)
            fprintf(out, "  (~%s allocated since attach)",
                    cli_fmt_bytes((double)x->since_attach_bytes, b1, sizeof(b1)));
        fputc('\n', out);
        if (v != CLI_CENSUS_UNREACHABLE && x->since_attach_stack) {
            char st[600];
            fprintf(out, "  %10s since attach mostly (~%s) from %s\n", "",
                    cli_fmt_bytes((double)x->since_attach_stack_bytes, b1, sizeof(b1)),
                    cli_fmt_printable(x->since_attach_stack, st, sizeof(st)));
        }
        if (v != CLI_CENSUS_BY_TYPE && i < 5 && x->preview)
            fprintf(out, "  %10s %s\n", "", cli_census_preview(x->preview, x->preview_len, pv, sizeof(pv)));
    }
    size_t all = cli_census_view_total(c, v, n), shown = n < top ? n : top;
    if (all > shown)
        fprintf(out, "  ... %zu more (--top)\n", all - shown);
    free(r);
}

static int cmp_root(const void *x, const void *y)
{
    const struct hi_census_root *a = *(const struct hi_census_root *const *)x;
    const struct hi_census_root *b = *(const struct hi_census_root *const *)y;
    if (a->retained_bytes != b->retained_bytes)
        return a->retained_bytes < b->retained_bytes ? 1 : -1;
    return 0;
}

/* Roots by what they retain; the index into c->roots comes back through
 * the pointer difference. */
static void roots_of(FILE *out, const struct cli_census *c, unsigned top)
{
    const struct hi_census_root **o = calloc(c->nroots + 1, sizeof(*o));
    char b1[32], b2[32], name[600];
    if (!o)
        return;
    for (size_t i = 0; i < c->nroots; i++)
        o[i] = &c->roots[i];
    qsort(o, c->nroots, sizeof(*o), cmp_root);
    fprintf(out, "\nRoots that hold the most (each credited with the blocks only it reaches; blocks that "
                 "several roots reach are one 'shared' line):\n");
    size_t held = 0; /* roots left with blocks of their own (the rest reach only shared ones) */
    while (held < c->nroots && o[held]->retained_blocks)
        held++;
    if (!held)
        fprintf(out, "  none: no root reaches a block\n");
    for (size_t i = 0; i < held && i < top; i++) {
        size_t idx = (size_t)(o[i] - c->roots);
        cli_fmt_printable(c->root_name && c->root_name[idx] ? c->root_name[idx] : "?", name, sizeof(name));
        fprintf(out, "  %10s %10s %s  %s\n", cli_fmt_bytes((double)o[i]->retained_bytes, b1, sizeof(b1)),
                cli_fmt_count((double)o[i]->retained_blocks, b2, sizeof(b2)),
                o[i]->retained_blocks == 1 ? "block " : "blocks", name);
    }
    size_t all = cli_census_roots_held(c), shown = held < top ? held : top;
    if (all > shown)
        fprintf(out, "  ... %zu more (--top)\n", all - shown);
    free(o);
}

int cli_census_write_text(FILE *out, const struct cli_census *c, unsigned top)
{
    const struct hi_census_end *e = &c->end;
    char b1[32], b2[32], b3[32], b4[32], comm[4 * sizeof(c->comm)]; /* read back from a file: raw */
    fprintf(out, "Census of pid %d (%s): glibc malloc, %u arena%s, %u heap%s; the heap as it is now, "
                 "allocated before attach or since\n",
            (int)c->pid, cli_fmt_printable(c->comm, comm, sizeof(comm)), e->arenas, e->arenas == 1 ? "" : "s", e->heaps, e->heaps == 1 ? "" : "s");
    if (c->held_ms > 0)
        fprintf(out, "  taken in a copy-on-write fork of the process: stall %.1f ms (threads held for their "
                     "registers, the fork %.1f ms of it), scan %.0f ms, %.0f ms in all\n",
                c->held_ms, (double)e->stall_ns / 1e6, (double)e->scan_ns / 1e6, c->wall_ms);
    else
        fprintf(out, "  taken in a copy-on-write fork of the process: stall %.1f ms (the fork), scan %.0f ms, "
                     "%.0f ms in all\n",
                (double)e->stall_ns / 1e6, (double)e->scan_ns / 1e6, c->wall_ms);
    if (e->threads > CLI_CENSUS_MAX_HELD) /* the rest ran on: the stall above is that of the held ones */
        fprintf(out, "  %zu of %u threads held (a census holds at most %d; the others ran on, their registers "
                     "not read)\n", c->threads_held, e->threads, CLI_CENSUS_MAX_HELD);
    if (c->cost.have)
        fprintf(out, "  the copy's cost: %s minor faults in the process while it lived (%.0f ms; %.0f/s just "
                     "before): about %s copied (the faults above that rate, a page each)\n",
                cli_fmt_count((double)c->cost.faults, b1, sizeof(b1)), c->cost.window_ms, c->cost.usual_per_s,
                cli_fmt_bytes((double)c->cost.copied_est, b2, sizeof(b2)));
    if (c->cost.have && c->cost.have_predicted)
        fprintf(out, "  predicted before the fork from the last census's copy: about %s\n",
                cli_fmt_bytes((double)c->cost.predicted, b2, sizeof(b2)));
    fprintf(out, "  in use       %12s blocks %10s\n", cli_fmt_count((double)e->in_use_blocks, b1, sizeof(b1)),
            cli_fmt_bytes((double)e->in_use_bytes, b2, sizeof(b2)));
    /* "leaked" would be a verdict the scan cannot give: an address kept
     * as a number (a Python int, ctypes), xor'ed, compressed or as an
     * offset is no pointer to it, and the block is still in use. */
    fprintf(out, "    unreachable%12s blocks %10s  (no pointer to them found from any root: leaked, or held "
                 "in a form no scan sees, e.g. an address kept as a number, an offset or xor'ed)\n",
            cli_fmt_count((double)e->unreachable_blocks, b1, sizeof(b1)),
            cli_fmt_bytes((double)e->unreachable_bytes, b2, sizeof(b2)));
    fprintf(out, "    mmapped    %12s blocks %10s  (mappings of their own)\n",
            cli_fmt_count((double)e->mmapped_blocks, b1, sizeof(b1)),
            cli_fmt_bytes((double)e->mmapped_bytes, b2, sizeof(b2)));
    char b5[32], b6[32];
    fprintf(out, "  free         %12s blocks %10s  (tcache %s blocks %s, fastbins %s blocks %s; the rest in "
                 "bins and top)\n",
            cli_fmt_count((double)e->free_blocks, b1, sizeof(b1)), cli_fmt_bytes((double)e->free_bytes, b2, sizeof(b2)),
            cli_fmt_count((double)e->tcache_blocks, b3, sizeof(b3)),
            cli_fmt_bytes((double)e->tcache_bytes, b4, sizeof(b4)),
            cli_fmt_count((double)e->fastbin_blocks, b5, sizeof(b5)),
            cli_fmt_bytes((double)e->fastbin_bytes, b6, sizeof(b6)));
    fprintf(out, "  allocator's own %9s  (chunk headers, tcache structures, fenceposts)\n",
            cli_fmt_bytes((double)e->metadata_bytes, b1, sizeof(b1)));
    fprintf(out, "  glibc's own count before the fork: free %s (without tcache), mmapped %s\n",
            cli_fmt_bytes((double)e->mallinfo_free, b1, sizeof(b1)),
            cli_fmt_bytes((double)e->mallinfo_mmapped, b2, sizeof(b2)));
    if (e->layout_from_debuginfo)
        fprintf(out, "  glibc's malloc_state and main_arena from libc's debug information (%s)\n", c->layout_where);
    else
        fprintf(out, "  glibc's malloc_state: built-in offsets (glibc 2.26 to 2.41) and a structure-independent "
                     "search for main_arena; %s\n",
                c->layout_where[0] ? c->layout_where : "libc's debug information was not looked for");
    if (c->rss_before)
        fprintf(out, "  target RSS %s before, %s after\n", cli_fmt_bytes((double)c->rss_before, b1, sizeof(b1)),
                cli_fmt_bytes((double)c->rss_after, b2, sizeof(b2)));
    rows_of(out, c, CLI_CENSUS_UNREACHABLE, top, "Unreachable blocks by type and size", "none");
    rows_of(out, c, CLI_CENSUS_BY_TYPE, top, "C++ types (blocks whose first word points into a vtable)",
            "none found: no block starts with a pointer into a `vtable for T` of a module with symbols");
    rows_of(out, c, CLI_CENSUS_BY_SIZE, top, "Sizes (usable bytes per block)", "no block in use");
    roots_of(out, c, top);
    cli_census_write_python_text(out, c, top);
    fprintf(out, "\nNotes: roots are the modules' writable data, the static TLS of %u threads, %u of %u "
                 "threads' stacks from their stack pointer (the others' stacks whole), the registers of %u "
                 "threads, and other private writable memory, anonymous or a file's (%s scanned). ",
            e->tls_roots, e->threads_with_sp, e->threads, e->threads_with_regs,
            cli_fmt_bytes((double)e->root_bytes, b1, sizeof(b1)));
    if (e->untouched_mib)
        fprintf(out, "Of that, %s of anonymous memory was never touched (no page, all zeros) and was skipped. ",
                cli_fmt_bytes((double)e->untouched_mib * 1048576.0, b1, sizeof(b1)));
    if (e->uncopied_mib)
        fprintf(out, "%s of memory the fork does not copy (MADV_DONTFORK or MADV_WIPEONFORK: V8's heap, for "
                     "one) was read from the running process right after the fork instead of from the copy%s. ",
                cli_fmt_bytes((double)e->uncopied_mib * 1048576.0, b1, sizeof(b1)),
                e->uncopied_missed_mib ? "" : ", all of it");
    if (e->uncopied_missed_mib)
        fprintf(out, "%s of it could not be read (out of time or room, or unmapped meanwhile): a block held only "
                     "from there counts as unreachable. ",
                cli_fmt_bytes((double)e->uncopied_missed_mib * 1048576.0, b1, sizeof(b1)));
    if (e->threads_with_regs < e->threads)
        fprintf(out, "The registers of %u threads were not read (%s), so a block held only in one of their "
                     "registers counts as unreachable. ",
                e->threads - e->threads_with_regs,
                c->regs_why[0] ? c->regs_why : "they did not stop within 200 ms, or began after the census");
    fprintf(out, "Vector registers are not roots. Blocks of heapinject's own are never counted.\n");
    if (e->groups_dropped)
        fprintf(out, "  %u %s folded into untyped groups (the table of groups was full)\n", e->groups_dropped,
                cli_fmt_noun(e->groups_dropped, "block was", "blocks were"));
    return ferror(out) ? -1 : 0;
}
