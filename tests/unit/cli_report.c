/* cli_report.c - the text and json reports and the --leaks rankings on a
 * synthetic profile: what a user reads must be right. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/leaks.h"
#include "cli/profile_read.h"
#include "cli/report.h"

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
    char *g = strstr(t, "Growing: 1 stacks");
    cr_assert_not_null(g, "%s", t);
    cr_expect(strstr(g, "+2.0 MiB/s") != NULL, "%s", g);
    cr_expect(strstr(g, "leak_session_buffer") != NULL);
    free(t);
    cli_profile_free(&p);
}

Test(cli_report, empty_profile_says_what_to_do)
{
    struct cli_profile p = { .pid = 1, .rate = 524288 };
    char *t = render(&p, "text", false);
    cr_expect(strstr(t, "No allocation was sampled") != NULL, "%s", t);
    cr_expect(strstr(t, "--rate") != NULL);
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
                     "assert d[\"stacks\"][0][\"frames\"][1][\"function\"]==\"leak_session_buffer\"; "
                     "assert d[\"stacks\"][0][\"frames\"][1][\"file\"]==\"/src/\\xff\\x01odd\\tname.c\"; "
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
    struct cli_report_format buf;
    cr_expect_null(cli_report_find("bogus", &buf));
    cr_expect_str_eq(cli_report_find("json", &buf)->suffix, ".json");
    cr_expect_not_null(cli_report_find("pprof", &buf));
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
    cr_assert_eq(cli_growing_rank(&p, &g, &n), 0);
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
