/* cli_html_model.c - the HTML page's data (cli/html/model.c): strings and
 * functions once each, the call tree and the stacks read back from their
 * 5-bit strings give every stack's functions and values; module kinds; a
 * diff's two sides in one tree. */
#include <jansson.h>

#include "cli/html/model.h"
#include "tests/unit/cli_report_fixture.h"

static const char VARINT[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The numbers of a model.c varint string (what model.js's varints reads). */
static size_t varints(const char *s, uint64_t *out, size_t max)
{
    size_t n = 0;
    uint64_t v = 0;
    unsigned shift = 0;
    for (; *s; s++) {
        const char *at = strchr(VARINT, *s);
        cr_assert(at && *at, "not a varint character: %c", *s);
        unsigned c = (unsigned)(at - VARINT);
        v |= (uint64_t)(c & 31) << shift;
        if (c & 32) {
            shift += 5;
            continue;
        }
        cr_assert(n < max);
        out[n++] = v;
        v = 0;
        shift = 0;
    }
    cr_assert_eq(shift, 0, "a number left unfinished");
    return n;
}

struct page {
    json_t *d;
    int64_t parent[64], frame[64];
    size_t nnodes;
};

static void load(struct page *pg, const struct cli_html_input *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_assert_eq(cli_html_model_write(in, f), 0);
    fclose(f);
    json_error_t err;
    pg->d = json_loadb(buf, len, 0, &err);
    cr_assert(pg->d, "not JSON: %s: %.200s", err.text, buf);
    free(buf);
    uint64_t n[256];
    size_t nn = varints(json_string_value(json_object_get(pg->d, "nodes")), n, 256);
    pg->nnodes = 0;
    for (size_t i = 0; i < nn;) {
        int64_t parent = (int64_t)n[i++] - 1;
        uint64_t count = n[i++];
        for (uint64_t k = 0; k < count; k++, pg->nnodes++) {
            cr_assert(pg->nnodes < 64);
            pg->parent[pg->nnodes] = k ? (int64_t)pg->nnodes - 1 : parent;
            cr_assert(pg->parent[pg->nnodes] < (int64_t)pg->nnodes, "a parent after its child");
            pg->frame[pg->nnodes] = (int64_t)n[i++];
        }
    }
    cr_assert_eq(pg->nnodes, json_integer_value(json_object_get(pg->d, "node_count")));
}

static const char *str(const struct page *pg, int64_t frame, int field)
{
    json_t *fr = json_object_get(pg->d, "frames"), *strs = json_object_get(pg->d, "strings");
    return json_string_value(json_array_get(strs, (size_t)json_integer_value(json_array_get(fr, (size_t)(5 * frame + field)))));
}

/* "leaf<caller<...": a node's functions, innermost first. */
static void path(const struct page *pg, int64_t node, char *out, size_t len)
{
    out[0] = '\0';
    for (int64_t x = node; x >= 0; x = pg->parent[x]) {
        strncat(out, str(pg, pg->frame[x], 0), len - strlen(out) - 2);
        if (pg->parent[x] >= 0)
            strcat(out, "<");
    }
}

Test(cli_html_model, stacks_read_back)
{
    struct cli_profile p;
    fx_profile(&p);
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    cr_expect_str_eq(json_string_value(json_object_get(pg.d, "kind")), "profile");
    /* strings once each */
    json_t *strs = json_object_get(pg.d, "strings");
    for (size_t i = 0; i < json_array_size(strs); i++)
        for (size_t j = i + 1; j < json_array_size(strs); j++)
            cr_expect_str_neq(json_string_value(json_array_get(strs, i)), json_string_value(json_array_get(strs, j)));
    /* functions once each: main is in all 4 stacks, one frame and one node */
    size_t nframes = json_array_size(json_object_get(pg.d, "frames")) / 5, mains = 0;
    for (size_t f = 0; f < nframes; f++)
        mains += !strcmp(str(&pg, (int64_t)f, 0), "main");
    cr_expect_eq(mains, 1);
    cr_expect_eq(nframes, 8, "main, serve, handle_request, leak_session_buffer, small_alloc, the weird one, "
                             "libc's, freed_quickly");
    cr_expect_eq(pg.nnodes, 8, "one root (main) and its 7 descendants");
    uint64_t st[64];
    size_t n = varints(json_string_value(json_object_get(pg.d, "stacks")), st, 64);
    cr_assert_eq(n, 5 * p.nstacks);
    const char *want[] = { "leak_session_buffer<handle_request<serve<main", "small_alloc<main",
                           "libc.so.6+0x29234<operator;weird <T> 12<main", "freed_quickly<main" };
    char got[512];
    for (size_t i = 0; i < p.nstacks; i++) {
        path(&pg, (int64_t)st[5 * i], got, sizeof(got));
        cr_expect_str_eq(got, want[i]);
        cr_expect_eq(st[5 * i + 1], (uint64_t)p.stacks[i].live_bytes);
        cr_expect_eq(st[5 * i + 2], (uint64_t)p.stacks[i].live_objects);
        cr_expect_eq(st[5 * i + 3], (uint64_t)p.stacks[i].alloc_bytes);
        cr_expect_eq(st[5 * i + 4], (uint64_t)p.stacks[i].alloc_objects);
    }
    /* file:line and kind: the program's (the first file in the maps) and libc's */
    int64_t leaf = pg.frame[st[0]], libc = pg.frame[st[10]];
    cr_expect_str_eq(str(&pg, leaf, 1), "/src/app.c");
    json_t *fr = json_object_get(pg.d, "frames");
    cr_expect_eq(json_integer_value(json_array_get(fr, (size_t)(5 * leaf + 2))), 42);
    cr_expect_eq(json_integer_value(json_array_get(fr, (size_t)(5 * leaf + 4))), CLI_HTML_MOD_PROGRAM);
    cr_expect_eq(json_integer_value(json_array_get(fr, (size_t)(5 * libc + 4))), CLI_HTML_MOD_RUNTIME);
    /* ticks, 4 numbers each; the leak ranking names stack 0 first */
    cr_expect_eq(json_array_size(json_object_get(pg.d, "ticks")), 4 * p.nticks);
    cr_expect_eq(json_integer_value(json_array_get(json_object_get(pg.d, "growing"), 0)), 0);
    json_decref(pg.d);
    cli_profile_free(&p);
}

Test(cli_html_model, diff_sides_share_the_tree)
{
    struct cli_profile base, cur;
    fx_profile(&base);
    fx_profile(&cur);
    cur.stacks[0].live_bytes = 3000000;
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &cur, .base = &base, .note = "growth" });
    cr_expect_str_eq(json_string_value(json_object_get(pg.d, "kind")), "diff");
    uint64_t a[64], b[64];
    cr_assert_eq(varints(json_string_value(json_object_get(pg.d, "stacks")), a, 64), 20);
    cr_assert_eq(varints(json_string_value(json_object_get(pg.d, "base")), b, 64), 20);
    for (size_t i = 0; i < 20; i += 5)
        cr_expect_eq(a[i], b[i], "the same stack, the same node");
    cr_expect_eq(a[1] - b[1], 2000000);
    cr_expect_eq(pg.nnodes, 8, "the base adds no node");
    json_decref(pg.d);
    cli_profile_free(&base);
    cli_profile_free(&cur);
}

/* A profile of two processes: each stack's pid in "pids", both processes
 * with their names in "processes"; one process: no "pids". */
Test(cli_html_model, pids_of_several_processes)
{
    struct cli_profile p;
    fx_profile(&p);
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    cr_expect_null(json_object_get(pg.d, "pids"), "one process, no pids");
    json_t *procs = json_object_get(pg.d, "processes");
    cr_assert_eq(json_array_size(procs), 1);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(procs, 0), "pid")), 4242);
    json_decref(pg.d);

    p.stacks[1].pid = 5151;
    p.stacks[3].pid = 5151; /* stacks 0 and 2 keep the profile's pid, 4242 */
    p.processes = calloc(2, sizeof(*p.processes));
    cr_assert(p.processes);
    p.nprocesses = 2;
    p.processes[0] = (struct cli_process){ .pid = 4242, .comm = fx_strdup("master") };
    p.processes[1] = (struct cli_process){ .pid = 5151, .comm = fx_strdup("worker") };
    load(&pg, &(struct cli_html_input){ .cur = &p });
    json_t *pids = json_object_get(pg.d, "pids");
    cr_assert_eq(json_array_size(pids), p.nstacks);
    const int want[] = { 4242, 5151, 4242, 5151 };
    for (size_t i = 0; i < p.nstacks; i++)
        cr_expect_eq(json_integer_value(json_array_get(pids, i)), want[i], "stack %zu", i);
    procs = json_object_get(pg.d, "processes");
    cr_assert_eq(json_array_size(procs), 2);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(procs, 1), "pid")), 5151);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(procs, 1), "comm")), "worker");
    json_decref(pg.d);
    cli_profile_free(&p);
}

Test(cli_html_model, big_numbers_round_trip)
{
    struct cli_profile p;
    fx_profile(&p);
    p.stacks[0].live_bytes = 5e12; /* past 32 bits: model.js's double path */
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    uint64_t st[64];
    varints(json_string_value(json_object_get(pg.d, "stacks")), st, 64);
    cr_expect_eq(st[1], 5000000000000ull);
    json_decref(pg.d);
    cli_profile_free(&p);
}

Test(cli_html_model, module_kinds)
{
    cr_expect_eq(cli_html_module_kind("/opt/app/bin/app", "/opt/app/bin/app"), CLI_HTML_MOD_PROGRAM);
    cr_expect_eq(cli_html_module_kind("/usr/lib/x86_64-linux-gnu/libssl.so.3", "/opt/app"), CLI_HTML_MOD_LIBRARY);
    cr_expect_eq(cli_html_module_kind("/lib/x86_64-linux-gnu/libc.so.6", "/opt/app"), CLI_HTML_MOD_RUNTIME);
    cr_expect_eq(cli_html_module_kind("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL), CLI_HTML_MOD_RUNTIME);
    cr_expect_eq(cli_html_module_kind("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", NULL), CLI_HTML_MOD_RUNTIME);
    cr_expect_eq(cli_html_module_kind("[jit]", NULL), CLI_HTML_MOD_JIT);
    cr_expect_eq(cli_html_module_kind("[vdso]", NULL), CLI_HTML_MOD_RUNTIME);
    cr_expect_eq(cli_html_module_kind(NULL, NULL), CLI_HTML_MOD_UNKNOWN);
}

/* "tick_stacks": over the ticks the growth points cover (3 here: the
 * fixture's session had 3 ticks), the stacks among the 3 that rose most in
 * some step, the most grown over the window first; flat and falling ones
 * left out. */
Test(cli_html_model, tick_stacks_top_growing)
{
    struct cli_profile p;
    fx_profile(&p);
    cr_assert_eq(p.nticks, 3);
    for (size_t i = 0; i < p.nstacks; i++)
        for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
            p.stacks[i].growth[g] = -1;
    int64_t *g0 = p.stacks[0].growth, *g1 = p.stacks[1].growth, *g2 = p.stacks[2].growth, *g3 = p.stacks[3].growth;
    g0[5] = 1000, g0[6] = 1100, g0[7] = 1200;  /* steady: +200 */
    g1[6] = 0, g1[7] = 5000;                   /* a burst in the last step, no first point */
    g2[5] = g2[6] = g2[7] = 700;               /* flat */
    g3[5] = 900, g3[6] = 800, g3[7] = 10;      /* falling */
    g1[0] = 1; /* outside the window: not read */
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    json_t *ts = json_object_get(pg.d, "tick_stacks");
    cr_assert(json_is_object(ts), "no tick_stacks");
    cr_expect_eq(json_integer_value(json_object_get(ts, "first_tick")), 0);
    cr_expect_eq(json_integer_value(json_object_get(ts, "points")), 3);
    json_t *s = json_object_get(ts, "series");
    int64_t want[] = { 1, -1, 0, 5000, 0, 1000, 1100, 1200 };
    cr_assert_eq(json_array_size(s), sizeof(want) / sizeof(want[0]), "series: %s", json_dumps(s, 0));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect_eq(json_integer_value(json_array_get(s, i)), want[i], "series[%zu]", i);
    json_decref(pg.d);
    cli_profile_free(&p);
}

/* Gives p n ticks, 0.5 s apart, none with top risers. */
static void fx_ticks(struct cli_profile *p, size_t n)
{
    free(p->ticks);
    p->ticks = calloc(n, sizeof(*p->ticks));
    cr_assert(p->ticks);
    p->nticks = n;
    for (size_t i = 0; i < n; i++)
        p->ticks[i].t_s = 0.5 * (double)(i + 1);
}

static void fx_top(struct cli_tick *t, uint32_t bucket, int64_t grew, uint64_t live)
{
    cr_assert(t->ntop < HI_TICK_TOP);
    t->top_bucket[t->ntop] = bucket;
    t->top_grew[t->ntop] = grew;
    t->top_live[t->ntop++] = live;
}

/* With the ticks' own top risers (issue 30): series over the whole
 * session, the stacks found by their agent bucket (not their index), the
 * most risen over the session first; a stack's points only at the ticks it
 * was among the top (-1 elsewhere); a bucket no stack has is left out. */
Test(cli_html_model, tick_stacks_whole_session)
{
    struct cli_profile p;
    fx_profile(&p);
    for (size_t i = 0; i < p.nstacks; i++)
        p.stacks[i].bucket = 30 - (uint32_t)i; /* the profile's order is not the agent's */
    fx_ticks(&p, 20);
    for (size_t i = 0; i < 20; i++) {
        if (i < 5)
            fx_top(&p.ticks[i], 28, 100, 100 * (i + 1)); /* stack 2: the first 5 ticks, +500 */
        fx_top(&p.ticks[i], 30, 10, 10 * (i + 1));       /* stack 0: all along, +200 */
        fx_top(&p.ticks[i], 99, 1000, 1000);              /* no such stack */
    }
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    json_t *ts = json_object_get(pg.d, "tick_stacks");
    cr_assert(json_is_object(ts), "no tick_stacks");
    cr_expect_eq(json_integer_value(json_object_get(ts, "first_tick")), 0);
    cr_expect_eq(json_integer_value(json_object_get(ts, "points")), 20);
    cr_expect_eq(json_integer_value(json_object_get(ts, "stride")), 1);
    json_t *s = json_object_get(ts, "series");
    cr_assert_eq(json_array_size(s), 2 * 21, "series: %s", json_dumps(s, 0));
    cr_expect_eq(json_integer_value(json_array_get(s, 0)), 2);
    for (size_t k = 0; k < 20; k++)
        cr_expect_eq(json_integer_value(json_array_get(s, 1 + k)), k < 5 ? (json_int_t)(100 * (k + 1)) : -1,
                     "stack 2 point %zu", k);
    cr_expect_eq(json_integer_value(json_array_get(s, 21)), 0);
    for (size_t k = 0; k < 20; k++)
        cr_expect_eq(json_integer_value(json_array_get(s, 22 + k)), (json_int_t)(10 * (k + 1)), "stack 0 point %zu", k);
    json_decref(pg.d);
    cli_profile_free(&p);
}

/* A long session is drawn in at most 600 points: 1300 ticks in points of 3
 * ticks each, a point the newest value among its ticks (the last point
 * holds the one tick left). */
Test(cli_html_model, tick_stacks_long_session_strided)
{
    struct cli_profile p;
    fx_profile(&p);
    for (size_t i = 0; i < p.nstacks; i++)
        p.stacks[i].bucket = (uint32_t)i;
    fx_ticks(&p, 1300);
    for (size_t i = 0; i < 1300; i++)
        fx_top(&p.ticks[i], 1, 1, i + 1);
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    json_t *ts = json_object_get(pg.d, "tick_stacks");
    cr_assert(json_is_object(ts), "no tick_stacks");
    cr_expect_eq(json_integer_value(json_object_get(ts, "stride")), 3);
    cr_assert_eq(json_integer_value(json_object_get(ts, "points")), 434);
    json_t *s = json_object_get(ts, "series");
    cr_assert_eq(json_array_size(s), 435);
    cr_expect_eq(json_integer_value(json_array_get(s, 0)), 1);
    cr_expect_eq(json_integer_value(json_array_get(s, 1)), 3);
    cr_expect_eq(json_integer_value(json_array_get(s, 2)), 6);
    cr_expect_eq(json_integer_value(json_array_get(s, 434)), 1300);
    json_decref(pg.d);
    cli_profile_free(&p);
}

/* A profile of two processes (issue 30): each agent numbers its own
 * buckets, so pid 4242's bucket 1 and pid 777's buckets 0 and 1 are three
 * different stacks. Each tick's risers are looked up among its own
 * process's stacks: stack 0 (pid 4242's bucket 0, the first stack with
 * bucket 0 of any pid) is never named. */
Test(cli_html_model, tick_stacks_of_two_processes)
{
    struct cli_profile p;
    fx_profile(&p);
    for (size_t i = 0; i < p.nstacks; i++) {
        p.stacks[i].bucket = (uint32_t)(i % 2);
        p.stacks[i].pid = i < 2 ? 0 : 777; /* 0: the profile's pid, 4242 */
    }
    fx_ticks(&p, 6);
    for (size_t i = 0; i < 6; i++) {
        if (i % 2 == 0) {
            fx_top(&p.ticks[i], 1, 100, 100 * (i + 1)); /* pid 4242's bucket 1: stack 1 */
        } else {
            p.ticks[i].pid = 777;
            fx_top(&p.ticks[i], 0, 1000, 1000 * (i + 1)); /* pid 777's bucket 0: stack 2 */
            fx_top(&p.ticks[i], 1, 10, 10 * (i + 1));     /* pid 777's bucket 1: stack 3 */
        }
    }
    struct page pg;
    load(&pg, &(struct cli_html_input){ .cur = &p });
    json_t *ts = json_object_get(pg.d, "tick_stacks");
    cr_assert(json_is_object(ts), "no tick_stacks");
    json_t *s = json_object_get(ts, "series");
    cr_assert_eq(json_array_size(s), 3 * 7, "series: %s", json_dumps(s, 0));
    /* most risen first: stack 2 (3000), stack 1 (300), stack 3 (30) */
    int64_t want_stack[] = { 2, 1, 3 };
    for (size_t j = 0; j < 3; j++) {
        cr_expect_eq(json_integer_value(json_array_get(s, 7 * j)), want_stack[j], "series %zu: %s", j,
                     json_dumps(s, 0));
        for (size_t k = 0; k < 6; k++) {
            bool at = want_stack[j] == 1 ? k % 2 == 0 : k % 2 == 1;
            int64_t v = want_stack[j] == 1 ? 100 : want_stack[j] == 2 ? 1000 : 10;
            cr_expect_eq(json_integer_value(json_array_get(s, 7 * j + 1 + k)), at ? v * (int64_t)(k + 1) : -1,
                         "stack %lld point %zu", (long long)want_stack[j], k);
        }
    }
    json_decref(pg.d);
    cli_profile_free(&p);
}
