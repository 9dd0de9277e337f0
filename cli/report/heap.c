/* heap.c - gperftools heap profile text (FORMATS.md):
 *
 *   heap profile: <inuse_objs>: <inuse_B> [<alloc_objs>: <alloc_B>] @ heap_v2/<rate>
 *   <inuse_objs>: <inuse_B> [<alloc_objs>: <alloc_B>] @ 0x<leaf> 0x<caller> ...
 *   MAPPED_LIBRARIES:
 *   <the target's /proc/PID/maps>
 *
 * With heap_v2/N the readers (go tool pprof, google-pprof, jeprof) unbias the
 * counts themselves from each line's average block size, so lines carry the
 * RAW sampled counts. At rate 1 every allocation is recorded: the header says
 * "heapprofile" (unsampled) and the counts are taken as they are.
 * Addresses are raw return addresses; the readers subtract 1.
 */
#include "cli/report/heap.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct heap_counts {
    uint64_t live_objs, live_bytes, alloc_objs, alloc_bytes;
};

/* The probability that a block of `size` bytes is sampled at mean rate
 * `rate` (Poisson sampling by bytes): 1 - exp(-size/rate). */
static double sample_prob(double size, uint64_t rate)
{
    if (rate <= 1 || size <= 0)
        return 1;
    return -expm1(-size / (double)rate);
}

static void derive_raw(double est_objs, double est_bytes, uint64_t rate, uint64_t *objs,
                       uint64_t *bytes)
{
    if (!(est_objs > 0) || !(est_bytes > 0)) {
        *objs = *bytes = 0;
        return;
    }
    double p = sample_prob(est_bytes / est_objs, rate);
    double o = est_objs * p;
    *objs = o < 1 ? 1 : (uint64_t)llround(o);
    *bytes = (uint64_t)llround(est_bytes / est_objs * (double)*objs);
}

/* A stack read back from pprof or made by diff has estimates but no raw
 * counts: recover what the samples were from the rate. */
static struct heap_counts stack_counts(const struct cli_stack *s, uint64_t rate)
{
    struct heap_counts c = { s->raw_live_objects, s->raw_live_bytes, s->raw_alloc_objects,
                             s->raw_alloc_bytes };
    if (rate <= 1) {
        /* Unsampled: raw and estimates are the same thing. */
        if (!c.alloc_objs && !c.live_objs) {
            c.live_objs = (uint64_t)llround(fmax(s->live_objects, 0));
            c.live_bytes = (uint64_t)llround(fmax(s->live_bytes, 0));
            c.alloc_objs = (uint64_t)llround(fmax(s->alloc_objects, 0));
            c.alloc_bytes = (uint64_t)llround(fmax(s->alloc_bytes, 0));
        }
        return c;
    }
    if (!c.alloc_objs && !c.live_objs) {
        derive_raw(s->live_objects, s->live_bytes, rate, &c.live_objs, &c.live_bytes);
        derive_raw(s->alloc_objects, s->alloc_bytes, rate, &c.alloc_objs, &c.alloc_bytes);
    }
    return c;
}

/* The maps text as MAPPED_LIBRARIES: one line per mapping, as read. A path
 * is its user's to choose: a control byte in it (ESC, BEL: terminal
 * escapes; CR) is written as the kernel writes a newline in a path there,
 * a backslash and three octal digits, so that the section stays one
 * mapping per line and nothing reaches a terminal raw. */
static int write_maps(FILE *out, const char *maps, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)maps[i];
        int e = ch == '\n' || (ch >= 0x20 && ch != 0x7f) ? fputc(ch, out) : fprintf(out, "\\%03o", ch);
        if (e < 0)
            return -EIO;
    }
    if (len && maps[len - 1] != '\n' && fputc('\n', out) == EOF)
        return -EIO;
    return 0;
}

int cli_report_heap(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out)
{
    struct cli_map *maps = NULL;
    size_t nmaps = 0;
    struct cli_buf body = { 0 };
    struct heap_counts total = { 0 };
    int err;

    (void)opt;
    if ((err = cli_maps_parse(p->maps, p->maps_len, &maps, &nmaps)))
        return err;
    err = -ENOMEM;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        if (s->kind == HI_KIND_PYMALLOC)
            continue; /* inside the arenas of the mmap stacks: the format has no kind to tell them apart */
        struct heap_counts c = stack_counts(s, p->rate);
        if (!c.alloc_objs && !c.live_objs)
            continue;
        struct cli_stack_loc *locs;
        size_t nlocs;
        if (cli_stack_locs(s, maps, nmaps, &locs, &nlocs))
            goto out;
        if (!nlocs) {
            free(locs);
            continue; /* the readers need at least one address */
        }
        /* A block still live was also allocated: alloc >= live. */
        if (c.alloc_objs < c.live_objs)
            c.alloc_objs = c.live_objs;
        if (c.alloc_bytes < c.live_bytes)
            c.alloc_bytes = c.live_bytes;
        int e = cli_buf_addf(&body, "%6" PRIu64 ": %8" PRIu64 " [%6" PRIu64 ": %8" PRIu64 "] @",
                             c.live_objs, c.live_bytes, c.alloc_objs, c.alloc_bytes);
        /* The format holds addresses only: a Python frame (issue 29), which
         * no reader could name, is left out (pprof and JSON keep it). */
        for (size_t k = 0; !e && k < nlocs; k++)
            if (hi_frame_kind(locs[k].addr) == HI_FRAME_NATIVE)
                e = cli_buf_addf(&body, " 0x%016" PRIx64, locs[k].addr);
        free(locs);
        if (e || cli_buf_addc(&body, '\n'))
            goto out;
        total.live_objs += c.live_objs;
        total.live_bytes += c.live_bytes;
        total.alloc_objs += c.alloc_objs;
        total.alloc_bytes += c.alloc_bytes;
    }

    char rate[32];
    if (p->rate > 1)
        snprintf(rate, sizeof(rate), "heap_v2/%" PRIu64, p->rate);
    else
        snprintf(rate, sizeof(rate), "heapprofile");
    err = -EIO;
    if (fprintf(out, "heap profile: %6" PRIu64 ": %8" PRIu64 " [%6" PRIu64 ": %8" PRIu64 "] @ %s\n",
                total.live_objs, total.live_bytes, total.alloc_objs, total.alloc_bytes, rate) < 0 ||
        cli_buf_write_all(out, body.data, body.len) ||
        fputs("\nMAPPED_LIBRARIES:\n", out) < 0 ||
        write_maps(out, p->maps, p->maps ? p->maps_len : 0))
        goto out;
    err = 0;
out:
    free(body.data);
    free(maps);
    return err;
}
