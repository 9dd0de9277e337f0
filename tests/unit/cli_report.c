/* cli_report.c - the text and json reports and the --leaks rankings on a
 * synthetic profile: what a user reads must be right. */
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/leaks.h"
#include "cli/profile/read.h"
#include "cli/report/report.h"
#include "cli/report/views.h"

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void frame(struct cli_stack *s, uint64_t addr, const char *fn, const char *file, int line, bool inl)
{
    s->frames = realloc(s->frames, (s->nframes + 1) * sizeof(*s->frames));
    struct cli_frame *f = &s->frames[s->nframes++];
    memset(f, 0, sizeof(*f));
    f->addr = addr;
    f->function = xstrdup(fn);
    f->module = xstrdup("/opt/app/bin/server");
    f->file = xstrdup(file);
    f->line = line;
    f->inlined = inl;
    f->module_offset = addr - 0x400000;
    if (!inl) {
        s->pcs = realloc(s->pcs, (s->npcs + 1) * sizeof(*s->pcs));
        s->pcs[s->npcs++] = addr;
    }
}

static struct cli_stack *stack(struct cli_profile *p, double live, double alloc)
{
    p->stacks = realloc(p->stacks, (p->nstacks + 1) * sizeof(*p->stacks));
    struct cli_stack *s = &p->stacks[p->nstacks++];
    memset(s, 0, sizeof(*s));
    s->live_bytes = live;
    s->live_objects = live / 100;
    s->alloc_bytes = alloc;
    s->alloc_objects = alloc / 100;
    for (unsigned i = 0; i < HI_GROWTH_POINTS; i++)
        s->growth[i] = -1;
    return s;
}

/* Three stacks: a leak through leak_session_buffer (with an inlined helper),
 * churn that is all freed, and a smaller live cache. */
static void make_profile(struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->pid = 4242;
    p->rate = 524288;
    p->duration_s = 3.0;
    p->tick_ms = 500;
    p->attach_ns = 1000000000ull;
    p->snapshot_ns = 4000000000ull;
    p->rss_bytes = 100 << 20;
    p->totals.est_live_bytes = 12 << 20;
    p->totals.est_alloc_bytes = 40 << 20;
    p->totals.raw_samples = 80;

    struct cli_stack *s = stack(p, 10 << 20, 10 << 20);
    s->raw_live_objects = 20;
    s->raw_alloc_objects = 20;
    s->live_age_sum_ms = 20 * 1500;
    s->oldest_live_ns = 1100000000ull; /* 2.9 s before the snapshot */
    for (unsigned i = 0; i < HI_GROWTH_POINTS; i++)
        s->growth[i] = (int64_t)(i + 1) << 20; /* +1 MiB per tick */
    frame(s, 0x401234, "make_buffer", "/src/app/buffer.h", 12, true);
    frame(s, 0x401234, "leak_session_buffer", "/src/app/session.c", 40, false);
    frame(s, 0x401500, "handle_request", "/src/app/server.c", 88, false);
    frame(s, 0x401600, "main", "/src/app/server.c", 120, false);

    s = stack(p, 0, 28 << 20); /* churn: all freed */
    s->raw_alloc_objects = 56;
    frame(s, 0x402000, "parse_header", "/src/app/http.c", 7, false);
    frame(s, 0x401500, "handle_request", "/src/app/server.c", 90, false);
    frame(s, 0x401600, "main", "/src/app/server.c", 120, false);

    s = stack(p, 2 << 20, 2 << 20);
    s->raw_live_objects = 4;
    s->live_age_sum_ms = 4 * 100;
    s->oldest_live_ns = 3800000000ull;
    s->growth[6] = 2 << 20; /* flat: not growing */
    s->growth[7] = 2 << 20;
    s->growth[5] = 2 << 20;
    frame(s, 0x403000, NULL, NULL, 0, false); /* no symbol: module+offset */
    frame(s, 0x401600, "main", "/src/app/server.c", 121, false);

    p->nthreads = 1;
    p->threads = calloc(1, sizeof(*p->threads));
    p->threads[0].tid = 4242;
    strcpy(p->threads[0].name, "server \"main\"");
    p->threads[0].alive = true;
    p->threads[0].alloc_bytes = 40 << 20;
    p->hist.calls[10] = 3;
    p->hist.bytes[10] = 3000;
    p->maps = strdup("00400000-00410000 r-xp 00000000 08:01 12 /opt/app/bin/server\n");
    p->maps_len = strlen(p->maps);
    cli_profile_sort(p);
}

static char *render(const struct cli_profile *p, const char *format, bool leaks)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct cli_report_options o = { .format = format, .leaks = leaks };
    cr_assert_eq(cli_report_write(p, &o, f), 0);
    fclose(f);
    return buf;
}

Test(cli_report, text_ranks_the_leak_first_with_its_frames)
{
    struct cli_profile p;
    make_profile(&p);
    char *t = render(&p, "text", false);
    char *first = strstr(t, "#1 ");
    cr_assert_not_null(first, "%s", t);
    char *second = strstr(t, "#2 ");
    cr_assert_not_null(second);
    /* The first stack: 10 MiB live, 83% of all live bytes, inlined helper
     * shown innermost, then leak_session_buffer with file:line. */
    cr_expect(strstr(first, "live 10.0 MiB (83.3%)") == first + 5, "%s", t);
    char *inl = strstr(first, "make_buffer");
    char *leak = strstr(first, "leak_session_buffer");
    cr_assert(inl && leak && inl < leak && leak < second, "%s", t);
    cr_expect(strstr(inl, "buffer.h:12 (inlined)") != NULL);
    cr_expect(strstr(leak, "session.c:40") != NULL);
    /* The unsymbolized frame shows module+offset. */
    cr_expect(strstr(t, "server+0x3000") != NULL, "%s", t);
    /* Functions: flat and cumulative like pprof -top; main holds all. */
    char *funcs = strstr(t, "Functions by live bytes");
    cr_assert_not_null(funcs, "%s", t);
    cr_expect(strstr(funcs, "10.0 MiB  83.3%  83.3%     10.0 MiB  83.3%  make_buffer") != NULL, "%s", funcs);
    cr_expect(strstr(funcs, "0 B   0.0%") != NULL);
    cr_expect(strstr(funcs, "12.0 MiB 100.0%  main") != NULL, "%s", funcs);
    free(t);
    cli_profile_free(&p);
}

Test(cli_report, text_leaks_view_shows_ages_and_growth)
{
    struct cli_profile p;
    make_profile(&p);
    char *t = render(&p, "text", true);
    cr_expect(strstr(t, "Leak candidates: 2 stacks") != NULL, "%s", t);
    cr_expect(strstr(t, "oldest 2.9 s old, mean age 1.5 s") != NULL, "%s", t);
    cr_expect(strstr(t, "parse_header") == NULL || strstr(t, "parse_header") > strstr(t, "Functions"),
              "freed churn must not be a leak candidate:\n%s", t);
    char *g = strstr(t, "Growing: 1 stack whose");
    cr_assert_not_null(g, "%s", t);
    cr_expect(strstr(g, "+2.0 MiB/s") != NULL, "%s", g);
    cr_expect(strstr(g, "leak_session_buffer") != NULL);
    free(t);
    cli_profile_free(&p);
}

/* Issue 14: the "sample more often" hint only when the exact counts say
 * the process allocated less than one sampling interval. */
Test(cli_report, empty_profile_says_what_to_do)
{
    struct cli_profile p = { .pid = 1, .rate = 524288 };
    p.totals.exact_alloc_calls = 10;
    p.totals.exact_alloc_bytes = 4096;
    char *t = render(&p, "text", false);
    cr_expect(strstr(t, "No allocation was sampled") != NULL, "%s", t);
    cr_expect(strstr(t, "allocated 4.0 KiB in 10 calls") != NULL, "%s", t);
    cr_expect(strstr(t, "--rate") != NULL);
    free(t);
}

Test(cli_report, empty_profile_without_calls_points_at_the_memory_breakdown)
{
    struct cli_profile p = { .pid = 1, .rate = 524288 };
    char *t = render(&p, "text", false);
    cr_expect(strstr(t, "no call reached the hooked malloc family") != NULL, "%s", t);
    cr_expect(strstr(t, "--rate") == NULL, "%s", t);
    free(t);
}

Test(cli_report, empty_profile_with_many_bytes_says_chance)
{
    struct cli_profile p = { .pid = 1, .rate = 524288 };
    p.totals.exact_alloc_calls = 3;
    p.totals.exact_alloc_bytes = 1 << 20;
    char *t = render(&p, "text", false);
    cr_expect(strstr(t, "missed them by chance") != NULL, "%s", t);
    cr_expect(strstr(t, "less than one sampling interval") == NULL, "%s", t);
    free(t);
}

Test(cli_report, note_comes_first)
{
    struct cli_profile p;
    make_profile(&p);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct cli_report_options o = { .format = "text", .note = "the process exited during the session" };
    cr_assert_eq(cli_report_write(&p, &o, f), 0);
    fclose(f);
    static const char want[] = "NOTE: the process exited during the session\n";
    cr_expect(!strncmp(buf, want, sizeof(want) - 1), "%s", buf);
    free(buf);
    cli_profile_free(&p);
}

Test(cli_report, json_has_the_documented_schema)
{
    struct cli_profile p;
    make_profile(&p);
    char *j = render(&p, "json", true);
    static const char *keys[] = { "\"schema\": \"heapinject-profile\"", "\"pid\": 4242", "\"rate\": 524288",
                                  "\"duration_s\": 3.000", "\"totals\": {\"alloc_bytes\": 41943040",
                                  "\"live_bytes\": 12582912", "\"stacks\": [", "\"frames\": [",
                                  "\"function\": \"leak_session_buffer\"", "\"module\": \"/opt/app/bin/server\"",
                                  "\"file\": \"/src/app/session.c\", \"line\": 40, \"inlined\": false",
                                  "\"function\": \"make_buffer\"", "\"inlined\": true", "\"function\": null",
                                  "\"threads\": [", "\"name\": \"server \\\"main\\\"\"", "\"histogram\": [",
                                  "\"min_size\": 1024, \"max_size\": 2047, \"calls\": 3", "\"leaks\": [",
                                  "\"oldest_age_s\": 2.900, \"mean_age_s\": 1.500", "\"growing\": [",
                                  "\"bytes_per_s\": 2097152", "\"maps\": \"00400000-00410000" };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_expect(strstr(j, keys[i]) != NULL, "json lacks %s:\n%s", keys[i], j);
    /* Sorted by live bytes: the leak (10 MiB) before the cache (2 MiB). */
    cr_expect(strstr(j, "\"live_bytes\": 10485760") < strstr(j, "\"live_bytes\": 2097152"));
    free(j);
    cli_profile_free(&p);
}

Test(cli_report, json_is_valid_json_for_python)
{
    struct cli_profile p;
    make_profile(&p);
    /* A path with bytes that are not UTF-8 and control characters. */
    free(p.stacks[0].frames[1].file);
    p.stacks[0].frames[1].file = strdup("/src/\xff\x01odd\tname.c");
    char *j = render(&p, "json", true);
    FILE *py = popen("python3 -c 'import json,sys; d=json.load(sys.stdin); "
                     "f=d[\"frames\"][d[\"stacks\"][0][\"frames\"][1]]; "
                     "assert f[\"function\"]==\"leak_session_buffer\"; "
                     "assert f[\"file\"]==\"/src/\\xff\\x01odd\\tname.c\"; "
                     "print(\"ok\")' > /dev/null 2>&1",
                     "w");
    if (!py)
        cr_skip_test("no python3");
    fputs(j, py);
    int st = pclose(py);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        cr_skip_test("no python3");
    cr_expect_eq(st, 0, "python3 rejected the json:\n%s", j);
    free(j);
    cli_profile_free(&p);
}

Test(cli_report, json_reads_back_into_the_same_profile)
{
    struct cli_profile p, q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    make_profile(&p);
    char *j = render(&p, "json", false);
    int rc = cli_profile_read_json(j, strlen(j), &q, why, sizeof(why));
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(q.nstacks, p.nstacks);
    for (size_t i = 0; i < p.nstacks; i++) {
        cr_expect_float_eq(q.stacks[i].live_bytes, p.stacks[i].live_bytes, 0.5);
        cr_expect_eq(q.stacks[i].nframes, p.stacks[i].nframes);
        cr_expect_eq(q.stacks[i].npcs, p.stacks[i].npcs);
        cr_expect_eq(q.stacks[i].growth[7], p.stacks[i].growth[7]);
    }
    cr_expect_str_eq(q.stacks[0].frames[1].function, "leak_session_buffer");
    cr_expect_eq(q.maps_len, p.maps_len);
    cr_expect_eq(q.snapshot_ns, p.snapshot_ns);
    free(j);
    cli_profile_free(&p);
    cli_profile_free(&q);
}

Test(cli_report, unknown_format_is_refused)
{
    struct cli_profile p = { 0 };
    struct cli_report_options o = { .format = "bogus" };
    cr_expect_eq(cli_report_write(&p, &o, stdout), -EINVAL);
    cr_expect_null(cli_report_find("bogus"));
    cr_expect_str_eq(cli_report_find("json")->suffix, ".json");
    cr_expect_not_null(cli_report_find("pprof"));
    cr_expect(cli_report_find("pprof")->binary);
    char names[256];
    cr_expect(strstr(cli_report_names(names, sizeof(names)), "text, json, pprof") != NULL, "%s", names);
}

Test(cli_leaks, growth_needs_a_steady_rise)
{
    struct cli_profile p = { .tick_ms = 1000 };
    struct cli_stack *s = stack(&p, 1, 1);
    int64_t steady[HI_GROWTH_POINTS] = { -1, -1, 100, 200, 200, 300, 400, 500 };
    memcpy(s->growth, steady, sizeof(steady));
    s = stack(&p, 1, 1);
    int64_t sawtooth[HI_GROWTH_POINTS] = { 100, 900, 100, 900, 100, 900, 100, 900 };
    memcpy(s->growth, sawtooth, sizeof(sawtooth));
    s = stack(&p, 1, 1);
    int64_t shrinking[HI_GROWTH_POINTS] = { 900, 800, 700, 600, 500, 400, 300, 200 };
    memcpy(s->growth, shrinking, sizeof(shrinking));
    s = stack(&p, 1, 1);
    int64_t two[HI_GROWTH_POINTS] = { -1, -1, -1, -1, -1, -1, 1, 100000 };
    memcpy(s->growth, two, sizeof(two));
    s = stack(&p, 1, 1);
    int64_t fast[HI_GROWTH_POINTS] = { 0, 1000, 2000, 3000, 4000, 5000, 6000, 7000 };
    memcpy(s->growth, fast, sizeof(fast));

    struct cli_growth *g;
    size_t n;
    cr_assert_eq(cli_leaks_growing_rank(&p, &g, &n), 0);
    cr_assert_eq(n, 2);
    cr_expect_eq(g[0].stack, 4);
    cr_expect_float_eq(g[0].per_s, 1000.0, 1e-6);
    cr_expect_eq(g[1].stack, 0);
    cr_expect_eq(g[1].points, 6);
    free(g);
    cli_profile_free(&p);
}

Test(cli_leaks, ages_come_from_the_snapshot_clock)
{
    struct cli_profile p = { .snapshot_ns = 10000000000ull };
    struct cli_stack *s = stack(&p, 100, 100);
    s->raw_live_objects = 4;
    s->live_age_sum_ms = 4 * 2500;
    s->oldest_live_ns = 6000000000ull;
    s = stack(&p, 300, 300);
    s->raw_live_objects = 1;
    s->oldest_live_ns = 20000000000ull; /* in the future: garbage, age 0 */
    stack(&p, 0, 500); /* nothing live: not a leak */
    struct cli_leak *l;
    size_t n;
    cr_assert_eq(cli_leaks_rank(&p, &l, &n), 0);
    cr_assert_eq(n, 2);
    cr_expect_eq(l[0].stack, 1);
    cr_expect_float_eq(l[0].oldest_age_s, 0.0, 1e-9);
    cr_expect_eq(l[1].stack, 0);
    cr_expect_float_eq(l[1].oldest_age_s, 4.0, 1e-9);
    cr_expect_float_eq(l[1].mean_age_s, 2.5, 1e-9);
    free(l);
    cli_profile_free(&p);
}

/* ---- --by function|module|thread ---------------------------------------- */

#define MiB (1024.0 * 1024.0)

/* make_profile() with the cache stack (stacks[1] once sorted) allocating in
 * a library, and first samples from two threads: the leak and the cache
 * from the named main thread, the churn from a thread that has no entry in
 * p->threads. */
static void make_views_profile(struct cli_profile *p)
{
    make_profile(p);
    struct cli_stack *leak = &p->stacks[0], *cache = &p->stacks[1], *churn = &p->stacks[2];
    cr_assert_str_eq(leak->frames[1].function, "leak_session_buffer");
    cr_assert_null(cache->frames[0].function);
    cr_assert_str_eq(churn->frames[0].function, "parse_header");
    free(cache->frames[0].module);
    cache->frames[0].module = strdup("/usr/lib/libcache.so.1");
    leak->first_tid = cache->first_tid = 4242;
    churn->first_tid = 4243;
}

static const struct cli_group *group(const struct cli_view_result *r, size_t i, const char *name)
{
    cr_assert_gt(r->n, i, "only %zu groups", r->n);
    cr_assert_str_eq(r->groups[i].name, name, "group %zu", i);
    return &r->groups[i];
}

static void expect_vals(const struct cli_group *g, double live, double alloc, double cum_live, double cum_alloc)
{
    cr_expect_float_eq(g->live_bytes, live, 1e-6, "%s live", g->name);
    cr_expect_float_eq(g->live_objects, live / 100, 1e-6, "%s live objects", g->name);
    cr_expect_float_eq(g->alloc_bytes, alloc, 1e-6, "%s alloc", g->name);
    cr_expect_float_eq(g->alloc_objects, alloc / 100, 1e-6, "%s alloc objects", g->name);
    cr_expect_float_eq(g->cum_live_bytes, cum_live, 1e-6, "%s cum live", g->name);
    cr_expect_float_eq(g->cum_live_objects, cum_live / 100, 1e-6, "%s cum live objects", g->name);
    cr_expect_float_eq(g->cum_alloc_bytes, cum_alloc, 1e-6, "%s cum alloc", g->name);
    cr_expect_float_eq(g->cum_alloc_objects, cum_alloc / 100, 1e-6, "%s cum alloc objects", g->name);
}

Test(cli_views, by_function_flat_is_the_innermost_frame_cum_counts_each_stack_once)
{
    struct cli_profile p;
    struct cli_view_result r;
    make_views_profile(&p);
    /* main appears twice in no stack, but make the leak stack recursive to
     * check that cum still counts it once. */
    frame(&p.stacks[0], 0x401500, "handle_request", "/src/app/server.c", 70, false);
    cr_assert_eq(cli_view_build(&p, CLI_VIEW_FUNCTION, false, &r), 0);
    cr_assert_eq(r.n, 6);
    cr_expect(!r.by_alloc);
    cr_expect_float_eq(r.total_live_bytes, 12 * MiB, 1e-6);
    cr_expect_float_eq(r.total_alloc_bytes, 40 * MiB, 1e-6);
    /* Flat live first, then cum live, then flat and cum alloc. */
    const struct cli_group *g = group(&r, 0, "make_buffer");
    expect_vals(g, 10 * MiB, 10 * MiB, 10 * MiB, 10 * MiB);
    cr_expect_str_eq(g->module, "/opt/app/bin/server");
    cr_expect_eq(g->stacks, 1);
    g = group(&r, 1, "libcache.so.1+0x3000");
    expect_vals(g, 2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB);
    cr_expect_str_eq(g->module, "/usr/lib/libcache.so.1");
    expect_vals(group(&r, 2, "main"), 0, 0, 12 * MiB, 40 * MiB);
    cr_expect_eq(r.groups[2].stacks, 3);
    g = group(&r, 3, "handle_request");
    expect_vals(g, 0, 0, 10 * MiB, 38 * MiB);
    cr_expect_eq(g->stacks, 2, "a recursive stack counts once");
    expect_vals(group(&r, 4, "leak_session_buffer"), 0, 0, 10 * MiB, 10 * MiB);
    expect_vals(group(&r, 5, "parse_header"), 0, 28 * MiB, 0, 28 * MiB);
    cli_view_free(&r);
    cli_profile_free(&p);
}

Test(cli_views, by_module_groups_frames_by_mapped_file)
{
    struct cli_profile p;
    struct cli_view_result r;
    make_views_profile(&p);
    cr_assert_eq(cli_view_build(&p, CLI_VIEW_MODULE, false, &r), 0);
    cr_assert_eq(r.n, 2);
    const struct cli_group *g = group(&r, 0, "/opt/app/bin/server");
    /* Flat: the leak and the churn allocate in the binary; cum: the
     * cache's stack goes through main, in the binary too. */
    expect_vals(g, 10 * MiB, 38 * MiB, 12 * MiB, 40 * MiB);
    cr_expect_str_eq(g->module, "/opt/app/bin/server");
    cr_expect_eq(g->stacks, 3);
    g = group(&r, 1, "/usr/lib/libcache.so.1");
    expect_vals(g, 2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB);
    cli_view_free(&r);
    cli_profile_free(&p);
}

Test(cli_views, by_thread_uses_the_first_sampling_thread_and_its_name)
{
    struct cli_profile p;
    struct cli_view_result r;
    make_views_profile(&p);
    cr_assert_eq(cli_view_build(&p, CLI_VIEW_THREAD, false, &r), 0);
    cr_assert_eq(r.n, 2);
    const struct cli_group *g = group(&r, 0, "server \"main\"");
    cr_expect_eq(g->tid, 4242);
    cr_expect_null(g->module);
    expect_vals(g, 12 * MiB, 12 * MiB, 12 * MiB, 12 * MiB);
    g = group(&r, 1, "tid 4243"); /* no such entry in p->threads */
    cr_expect_eq(g->tid, 4243);
    expect_vals(g, 0, 28 * MiB, 0, 28 * MiB);
    cli_view_free(&r);
    cli_profile_free(&p);
}

Test(cli_views, leaks_keep_live_stacks_and_churn_ranks_by_allocation)
{
    struct cli_profile p;
    struct cli_view_result r;
    make_views_profile(&p);
    cr_assert_eq(cli_view_build(&p, CLI_VIEW_FUNCTION, true, &r), 0);
    cr_expect_eq(r.n, 5, "the freed churn's parse_header is no leak");
    for (size_t i = 0; i < r.n; i++)
        cr_expect_str_neq(r.groups[i].name, "parse_header");
    expect_vals(group(&r, 3, "handle_request"), 0, 0, 10 * MiB, 10 * MiB);
    cli_view_free(&r);

    for (size_t i = 0; i < p.nstacks; i++)
        p.stacks[i].live_bytes = p.stacks[i].live_objects = 0;
    cr_assert_eq(cli_view_build(&p, CLI_VIEW_FUNCTION, false, &r), 0);
    cr_expect(r.by_alloc);
    group(&r, 0, "parse_header"); /* 28 MiB allocated, all freed */
    group(&r, 1, "make_buffer");
    cli_view_free(&r);
    cr_expect_eq(cli_view_build(&p, CLI_VIEW_STACK, false, &r), -EINVAL);
    cli_profile_free(&p);
}

Test(cli_views, names_parse_and_print)
{
    enum cli_view v = CLI_VIEW_STACK;
    cr_expect_eq(cli_view_parse("module", &v), 0);
    cr_expect_eq(v, CLI_VIEW_MODULE);
    cr_expect_eq(cli_view_parse("functions", &v), -EINVAL);
    cr_expect_str_eq(cli_view_name(CLI_VIEW_THREAD), "thread");
    cr_expect_str_eq(cli_view_name(CLI_VIEW_STACK), "stack");
}

static char *render_by(const struct cli_profile *p, const char *format, bool leaks, enum cli_view by)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct cli_report_options o = { .format = format, .leaks = leaks, .by = by };
    cr_assert_eq(cli_report_write(p, &o, f), 0);
    fclose(f);
    return buf;
}

Test(cli_views, text_by_function_is_one_ranked_table)
{
    struct cli_profile p;
    make_views_profile(&p);
    char *t = render_by(&p, "text", false, CLI_VIEW_FUNCTION);
    cr_expect(strstr(t, "heapinject: pid 4242") != NULL, "the header stays:\n%s", t);
    cr_expect(strstr(t, "6 functions; top 6 by live bytes") != NULL, "%s", t);
    cr_expect(strstr(t, "#3 ") == NULL, "no stacks in a function view:\n%s", t);
    static const char row1[] = "\n1      10.0 MiB  83.3%     105k   10.0 MiB  83.3%   10.0 MiB  25.0%   10.0 MiB  "
                               "make_buffer  (server)\n";
    static const char row3[] = "\n3           0 B   0.0%        0   12.0 MiB 100.0%        0 B   0.0%   40.0 MiB  "
                               "main  (server)\n";
    const char *r1 = strstr(t, row1), *r3 = strstr(t, row3);
    cr_expect(r1 && r3 && r1 < r3, "%s", t);
    free(t);

    t = render_by(&p, "text", false, CLI_VIEW_THREAD);
    cr_expect(strstr(t, "\n1      12.0 MiB 100.0%     126k   12.0 MiB  30.0%  server \"main\"  (tid 4242)\n") != NULL,
              "%s", t);
    cr_expect(strstr(t, "\n2           0 B   0.0%        0   28.0 MiB  70.0%  tid 4243\n") != NULL, "%s", t);
    cr_expect(strstr(t, "cum live") == NULL, "a stack has one first thread: no cum columns\n%s", t);
    cr_expect(strstr(t, "2 threads; top 2 by live bytes (estimated; each stack counts for the thread that made its "
                        "first sample)") != NULL, "%s", t);
    free(t);

    p.stacks[0].raw_live_objects = 20;
    t = render_by(&p, "text", true, CLI_VIEW_MODULE);
    cr_expect(strstr(t, "Leak candidates by 2 modules; top 2 by live bytes") != NULL, "%s", t);
    cr_expect(strstr(t, "  /opt/app/bin/server\n2 ") != NULL, "%s", t);
    free(t);
    for (size_t i = 0; i < p.nstacks; i++)
        p.stacks[i].raw_live_objects = 0;
    t = render_by(&p, "text", true, CLI_VIEW_FUNCTION);
    cr_expect(strstr(t, "Leak candidates by function: none, no stack holds sampled blocks that are still live.") != NULL,
              "%s", t);
    free(t);
    p.stacks[0].raw_live_objects = 20;

    struct cli_report_options o = { .format = "text", .by = CLI_VIEW_FUNCTION, .top = 2 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(cli_report_write(&p, &o, f), 0);
    fclose(f);
    cr_expect(strstr(buf, "top 2 by live") != NULL && strstr(buf, "(4 more functions: --top N shows more)") != NULL,
              "%s", buf);
    free(buf);
    cli_profile_free(&p);
}

Test(cli_views, json_by_function_adds_by_and_groups_and_reads_back)
{
    struct cli_profile p, q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    make_views_profile(&p);
    char *j = render_by(&p, "json", false, CLI_VIEW_FUNCTION);
    cr_expect(strstr(j, "  \"by\": \"function\",\n  \"groups\": [\n"
                        "    {\"name\": \"make_buffer\", \"module\": \"/opt/app/bin/server\", \"stacks\": 1,\n"
                        "     \"live_bytes\": 10485760, \"live_objects\": 104858, \"alloc_bytes\": 10485760, "
                        "\"alloc_objects\": 104858,\n"
                        "     \"cum_live_bytes\": 10485760, \"cum_live_objects\": 104858, \"cum_alloc_bytes\": "
                        "10485760, \"cum_alloc_objects\": 104858},\n") != NULL,
              "%s", j);
    cr_expect(strstr(j, "{\"name\": \"main\", \"module\": \"/opt/app/bin/server\", \"stacks\": 3,\n"
                        "     \"live_bytes\": 0, \"live_objects\": 0, \"alloc_bytes\": 0, \"alloc_objects\": 0,\n"
                        "     \"cum_live_bytes\": 12582912, \"cum_live_objects\": 125829, \"cum_alloc_bytes\": "
                        "41943040, \"cum_alloc_objects\": 419430}") != NULL,
              "%s", j);
    cr_expect(strstr(j, "\"stacks\": [") != NULL, "the stacks stay: the file is still a profile");
    /* Still a profile heapinject reads (the groups are derived data). */
    cr_assert_eq(cli_profile_read_json(j, strlen(j), &q, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(q.nstacks, p.nstacks);
    cli_profile_free(&q);
    free(j);

    j = render_by(&p, "json", false, CLI_VIEW_THREAD);
    cr_expect(strstr(j, "{\"name\": \"tid 4243\", \"module\": null, \"tid\": 4243, \"stacks\": 1,") != NULL, "%s", j);
    free(j);
    j = render_by(&p, "json", false, CLI_VIEW_STACK);
    cr_expect(strstr(j, "\"groups\"") == NULL && strstr(j, "\"by\"") == NULL, "default json unchanged");
    free(j);
    cli_profile_free(&p);
}

Test(cli_views, file_formats_ignore_by)
{
    struct cli_profile p;
    make_views_profile(&p);
    char *a = render_by(&p, "collapsed", false, CLI_VIEW_STACK);
    char *b = render_by(&p, "collapsed", false, CLI_VIEW_FUNCTION);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    cli_profile_free(&p);
}

/* The stacks' estimates are written without printf (issue 17) and must
 * read as "%.0f" writes them: to nearest, ties to even; never negative,
 * NaN or infinite; past 2^53 still exact digits. */
Test(cli_report, json_stack_estimates_round_as_printf_does)
{
    struct cli_profile p;
    make_profile(&p);
    p.stacks[0].live_bytes = 2.5;
    p.stacks[0].live_objects = 3.5;
    p.stacks[0].alloc_bytes = 1e20;
    p.stacks[0].alloc_objects = -4;
    p.stacks[1].live_bytes = NAN;
    p.stacks[1].live_objects = 0.49999999999999994;
    p.stacks[1].alloc_bytes = 9007199254740993.0;
    p.stacks[1].alloc_objects = INFINITY;
    char *j = render(&p, "json", false);
    cr_expect(strstr(j, "\"live_bytes\": 2, \"live_objects\": 4, \"alloc_bytes\": 100000000000000000000, "
                        "\"alloc_objects\": 0,") != NULL, "%s", j);
    cr_expect(strstr(j, "\"live_bytes\": 0, \"live_objects\": 0, \"alloc_bytes\": 9007199254740992, "
                        "\"alloc_objects\": 0,") != NULL, "%s", j);
    free(j);
    cli_profile_free(&p);
}
