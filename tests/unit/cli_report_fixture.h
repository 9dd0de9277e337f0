/* cli_format_fixture.h - a synthetic symbolized profile for the format
 * writer and reader tests (tests/unit/cli_format_*.c), and helpers to run a
 * writer into memory. Header-only: each test binary includes it once. */
#ifndef HI_TESTS_CLI_FORMAT_FIXTURE_H
#define HI_TESTS_CLI_FORMAT_FIXTURE_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

/* The maps of the fake target: app (PIE, code at ...5000), libc, and
 * heapinject's own payload, whose PCs writers must leave out. */
#define FX_MAPS                                                                                  \
    "555555554000-555555555000 r--p 00000000 08:01 100                        /opt/app/bin/app\n" \
    "555555555000-555555556000 r-xp 00001000 08:01 100                        /opt/app/bin/app\n" \
    "555555556000-555555557000 rw-p 00002000 08:01 100                        /opt/app/bin/app\n" \
    "555555558000-555555579000 rw-p 00000000 00:00 0                          [heap]\n"           \
    "7ffff7dd0000-7ffff7df0000 r-xp 00028000 08:01 200                        /lib/x86_64-linux-gnu/libc.so.6\n" \
    "7ffff7fc0000-7ffff7fc8000 r-xp 00002000 08:01 300                        /opt/hi/libheapinject.so\n"

#define FX_APP "/opt/app/bin/app"
#define FX_LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* PCs (return addresses). */
#define PC_LEAK 0x555555555123ull   /* in leak_session_buffer */
#define PC_SERVE 0x555555555456ull  /* handle_request inlined into serve */
#define PC_MAIN 0x555555555789ull   /* main */
#define PC_SMALL 0x5555555551a0ull  /* small_alloc */
#define PC_LIBC 0x7ffff7dd1234ull   /* unsymbolized libc frame */
#define PC_WEIRD 0x5555555552b0ull  /* a function with a hostile name */
#define PC_FREED 0x5555555552f0ull  /* freed_quickly */
#define PC_OWN 0x7ffff7fc1000ull    /* inside libheapinject.so */

static inline char *fx_strdup(const char *s)
{
    char *d = s ? strdup(s) : NULL;
    cr_assert(!s || d);
    return d;
}

static inline void fx_frame(struct cli_frame *f, uint64_t addr, const char *fn, const char *module,
                            const char *file, int line, bool inlined)
{
    f->addr = addr;
    f->function = fx_strdup(fn);
    f->module = fx_strdup(module);
    f->file = fx_strdup(file);
    f->line = line;
    f->inlined = inlined;
    f->module_offset = module && !strcmp(module, FX_APP) ? addr - 0x555555554000ull
                       : module ? addr - 0x7ffff7da8000ull : 0;
}

struct fx_frame_spec {
    uint64_t addr;
    const char *fn, *module, *file;
    int line;
    bool inlined;
};

static inline void fx_stack(struct cli_stack *s, const struct fx_frame_spec *fr, uint32_t nfr,
                            double live_b, double live_o, double alloc_b, double alloc_o)
{
    memset(s, 0, sizeof(*s));
    s->frames = calloc(nfr, sizeof(*s->frames));
    s->pcs = calloc(nfr + 1, sizeof(*s->pcs));
    cr_assert(s->frames && s->pcs);
    /* The raw PCs start with one inside the payload, as captured. */
    s->pcs[s->npcs++] = PC_OWN;
    for (uint32_t i = 0; i < nfr; i++) {
        fx_frame(&s->frames[i], fr[i].addr, fr[i].fn, fr[i].module, fr[i].file, fr[i].line,
                 fr[i].inlined);
        if (!fr[i].inlined)
            s->pcs[s->npcs++] = fr[i].addr;
    }
    s->nframes = nfr;
    s->live_bytes = live_b;
    s->live_objects = live_o;
    s->alloc_bytes = alloc_b;
    s->alloc_objects = alloc_o;
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        s->growth[g] = -1;
}

/* The profile:
 *   0 leak_session_buffer <- handle_request (inlined) <- serve <- main
 *       live 1,000,000 B / 100, alloc 2,000,000 B / 200
 *   1 small_alloc <- main                       live 1,000 / 10, alloc 5,000 / 50
 *   2 libc (no symbol) <- weird name <- main    live 3,000 / 3, alloc 3,000 / 3
 *   3 freed_quickly <- main                     live 0, alloc 300,000 / 3,000
 */
static inline void fx_profile(struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->pid = 4242;
    p->rate = 4096;
    p->duration_s = 2.0;
    p->attach_ns = 1000000000ull;
    p->snapshot_ns = 3000000000ull;
    p->rss_bytes = 12u << 20;
    p->tick_ms = 500;
    p->maps = fx_strdup(FX_MAPS);
    p->maps_len = strlen(FX_MAPS);
    p->nstacks = 4;
    p->stacks = calloc(4, sizeof(*p->stacks));
    cr_assert(p->stacks);

    const struct fx_frame_spec s0[] = {
        { PC_LEAK, "leak_session_buffer", FX_APP, "/src/app.c", 42, false },
        { PC_SERVE, "handle_request", FX_APP, "/src/app.c", 80, true },
        { PC_SERVE, "serve", FX_APP, "/src/app.c", 100, false },
        { PC_MAIN, "main", FX_APP, "/src/app.c", 120, false },
    };
    fx_stack(&p->stacks[0], s0, 4, 1000000, 100, 2000000, 200);
    p->stacks[0].raw_live_bytes = 910000;
    p->stacks[0].raw_live_objects = 91;
    p->stacks[0].raw_alloc_bytes = 1820000;
    p->stacks[0].raw_alloc_objects = 182;
    for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
        p->stacks[0].growth[g] = 100000 * (g + 1);

    const struct fx_frame_spec s1[] = {
        { PC_SMALL, "small_alloc", FX_APP, "/src/lib.c", 7, false },
        { PC_MAIN, "main", FX_APP, "/src/app.c", 120, false },
    };
    fx_stack(&p->stacks[1], s1, 2, 1000, 10, 5000, 50);
    p->stacks[1].raw_live_bytes = 200;
    p->stacks[1].raw_live_objects = 2;
    p->stacks[1].raw_alloc_bytes = 1000;
    p->stacks[1].raw_alloc_objects = 10;

    const struct fx_frame_spec s2[] = {
        { PC_LIBC, NULL, FX_LIBC, NULL, 0, false },
        { PC_WEIRD, "operator;weird <T> 12", FX_APP, NULL, 0, false },
        { PC_MAIN, "main", FX_APP, "/src/app.c", 120, false },
    };
    fx_stack(&p->stacks[2], s2, 3, 3000, 3, 3000, 3);
    p->stacks[2].raw_live_bytes = 3000;
    p->stacks[2].raw_live_objects = 3;
    p->stacks[2].raw_alloc_bytes = 3000;
    p->stacks[2].raw_alloc_objects = 3;

    const struct fx_frame_spec s3[] = {
        { PC_FREED, "freed_quickly", FX_APP, "/src/app.c", 60, false },
        { PC_MAIN, "main", FX_APP, "/src/app.c", 120, false },
    };
    fx_stack(&p->stacks[3], s3, 2, 0, 0, 300000, 3000);
    p->stacks[3].raw_alloc_bytes = 7000;
    p->stacks[3].raw_alloc_objects = 70;

    p->totals.est_live_bytes = 1004000;
    p->totals.est_live_objects = 113;
    p->totals.est_alloc_bytes = 2308000;
    p->totals.est_alloc_objects = 3253;
    p->totals.exact_alloc_bytes = 2310000;
    p->totals.exact_alloc_calls = 3260;
    p->totals.raw_samples = 265;
    p->totals.buckets = 4;

    p->nticks = 3;
    p->ticks = calloc(3, sizeof(*p->ticks));
    cr_assert(p->ticks);
    p->ticks[0] = (struct cli_tick){ .t_s = 0.5, .live_bytes = 400000, .alloc_bytes = 800000, .rss_bytes = 10u << 20 };
    p->ticks[1] = (struct cli_tick){ .t_s = 1.0, .live_bytes = 900000, .alloc_bytes = 1600000, .rss_bytes = 11u << 20 };
    p->ticks[2] = (struct cli_tick){ .t_s = 1.5, .live_bytes = 990000, .alloc_bytes = 2000000, .rss_bytes = 12u << 20 };
}

/* Runs a writer into a malloc'ed NUL-terminated buffer; returns the
 * writer's result. */
static inline int fx_write(cli_format_writer w, const struct cli_profile *p,
                           const struct cli_format_options *opt, char **data, size_t *len)
{
    FILE *f = open_memstream(data, len);
    cr_assert(f);
    int rc = w(p, opt, f);
    cr_assert_eq(fclose(f), 0);
    return rc;
}

/* Number of lines of text that start with prefix. */
static inline size_t fx_count_lines(const char *text, const char *prefix)
{
    size_t n = 0, pl = strlen(prefix);
    for (const char *l = text; l && *l;) {
        if (!strncmp(l, prefix, pl))
            n++;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return n;
}

#endif /* HI_TESTS_CLI_FORMAT_FIXTURE_H */
