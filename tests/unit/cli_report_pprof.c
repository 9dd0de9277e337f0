/* cli_format_pprof.c - pprof: the protobuf layout pprof depends on, and the
 * round trip through our pprof reader. */
#include <zlib.h>

#include "cli/report/profile.pb-c.h"
#include "cli/profile/read.h"
#include "cli/report/pprof.h"
#include "tests/unit/cli_report_fixture.h"

typedef Perftools__Profiles__Profile pb_profile;

static pb_profile *unpack(const char *gz, size_t len)
{
    static unsigned char raw[1 << 20];
    z_stream zs = { 0 };
    cr_assert_eq(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (unsigned char *)gz;
    zs.avail_in = (uInt)len;
    zs.next_out = raw;
    zs.avail_out = sizeof(raw);
    cr_assert_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof(raw) - zs.avail_out;
    inflateEnd(&zs);
    pb_profile *pb = perftools__profiles__profile__unpack(NULL, n, raw);
    cr_assert(pb);
    return pb;
}

static const char *S(const pb_profile *pb, int64_t i)
{
    cr_assert(i >= 0 && (size_t)i < pb->n_string_table);
    return pb->string_table[i];
}

static const Perftools__Profiles__Location *loc(const pb_profile *pb, uint64_t id)
{
    for (size_t i = 0; i < pb->n_location; i++)
        if (pb->location[i]->id == id)
            return pb->location[i];
    cr_assert_fail("no location %lu", (unsigned long)id);
    return NULL;
}

static const char *fn_name(const pb_profile *pb, uint64_t id)
{
    for (size_t i = 0; i < pb->n_function; i++)
        if (pb->function[i]->id == id)
            return S(pb, pb->function[i]->name);
    cr_assert_fail("no function %lu", (unsigned long)id);
    return NULL;
}

Test(cli_format_pprof, go_heap_layout)
{
    struct cli_profile p;
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_pprof, &p, NULL, &out, &len), 0);
    cr_assert(len > 2 && (unsigned char)out[0] == 0x1f && (unsigned char)out[1] == 0x8b);
    pb_profile *pb = unpack(out, len);

    cr_expect_str_eq(pb->string_table[0], "");
    static const char *const types[4][2] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
                                             { "inuse_objects", "count" }, { "inuse_space", "bytes" } };
    cr_assert_eq(pb->n_sample_type, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(S(pb, pb->sample_type[i]->type), types[i][0]);
        cr_expect_str_eq(S(pb, pb->sample_type[i]->unit), types[i][1]);
    }
    cr_assert(pb->period_type);
    cr_expect_str_eq(S(pb, pb->period_type->type), "space");
    cr_expect_str_eq(S(pb, pb->period_type->unit), "bytes");
    cr_expect_eq(pb->period, 4096);
    cr_expect_eq(pb->default_sample_type, 0);
    cr_expect_eq(pb->duration_nanos, 2000000000);

    /* Mappings: executable lines only, the main binary first. */
    cr_assert_eq(pb->n_mapping, 3);
    cr_expect_str_eq(S(pb, pb->mapping[0]->filename), FX_APP);
    cr_expect_eq(pb->mapping[0]->memory_start, 0x555555555000ull);
    cr_expect_eq(pb->mapping[0]->memory_limit, 0x555555556000ull);
    cr_expect_eq(pb->mapping[0]->file_offset, 0x1000);
    cr_expect(pb->mapping[0]->has_functions && pb->mapping[0]->has_inline_frames);
    cr_expect_str_eq(S(pb, pb->mapping[1]->filename), FX_LIBC);
    cr_expect(!pb->mapping[1]->has_functions, "libc has a location without symbols");

    /* Stack 0: three locations (the payload PC left out), addresses - 1,
     * the inlined frame first in its location. */
    cr_assert_eq(pb->n_sample, 4);
    const Perftools__Profiles__Sample *s = pb->sample[0];
    cr_assert_eq(s->n_value, 4);
    cr_expect_eq(s->value[0], 200);
    cr_expect_eq(s->value[1], 2000000);
    cr_expect_eq(s->value[2], 100);
    cr_expect_eq(s->value[3], 1000000);
    cr_assert_eq(s->n_location_id, 3);
    const Perftools__Profiles__Location *l0 = loc(pb, s->location_id[0]);
    cr_expect_eq(l0->address, PC_LEAK - 1);
    cr_expect_eq(l0->mapping_id, pb->mapping[0]->id);
    cr_assert_eq(l0->n_line, 1);
    cr_expect_str_eq(fn_name(pb, l0->line[0]->function_id), "leak_session_buffer");
    cr_expect_eq(l0->line[0]->line, 42);
    const Perftools__Profiles__Location *l1 = loc(pb, s->location_id[1]);
    cr_assert_eq(l1->n_line, 2);
    cr_expect_str_eq(fn_name(pb, l1->line[0]->function_id), "handle_request");
    cr_expect_str_eq(fn_name(pb, l1->line[1]->function_id), "serve");
    /* main is one location shared by all samples. */
    cr_expect_eq(pb->sample[1]->location_id[1], s->location_id[2]);
    /* Go's "bytes" label: average block size. */
    cr_assert_eq(s->n_label, 3); /* bytes, kind, pid (no comm: the fixture names no process) */
    cr_expect_str_eq(S(pb, s->label[0]->key), "bytes");
    cr_expect_eq(s->label[0]->num, 10000);
    /* and the kind (issue 14): these stacks are malloc's */
    cr_expect_str_eq(S(pb, s->label[1]->key), "kind");
    cr_expect_str_eq(S(pb, s->label[1]->str), "malloc");
    /* and its process (issue 28): go tool pprof -tagfocus=pid=4242 */
    cr_expect_str_eq(S(pb, s->label[2]->key), "pid");
    cr_expect_eq(s->label[2]->num, 4242);

    /* One comment for pprof's header, one for our reader. */
    cr_assert(pb->n_comment >= 2);
    cr_expect(strstr(S(pb, pb->comment[0]), "pid 4242") != NULL);
    cr_expect_eq(strncmp(S(pb, pb->comment[1]), "#heapinject v1 ", 15), 0);

    perftools__profiles__profile__free_unpacked(pb, NULL);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_pprof, unsymbolized_variant)
{
    struct cli_profile p;
    struct cli_format_options opt = { .no_symbols = true };
    char *out;
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_pprof, &p, &opt, &out, &len), 0);
    pb_profile *pb = unpack(out, len);
    cr_expect_eq(pb->n_function, 0);
    for (size_t i = 0; i < pb->n_location; i++)
        cr_expect_eq(pb->location[i]->n_line, 0);
    for (size_t i = 0; i < pb->n_mapping; i++)
        cr_expect(!pb->mapping[i]->has_functions && !pb->mapping[i]->has_filenames &&
                  !pb->mapping[i]->has_line_numbers && !pb->mapping[i]->has_inline_frames);
    cr_expect_eq(loc(pb, pb->sample[0]->location_id[0])->address, PC_LEAK - 1);
    perftools__profiles__profile__free_unpacked(pb, NULL);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_pprof, binary_hint_and_build_id)
{
    /* A mapping of a real file: this test binary, which gcc gave a GNU
     * build id. The hint makes it the main mapping even though it is not
     * first in the maps. */
    char exe[4096], maps[16384];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert(n > 0);
    exe[n] = '\0';
    struct cli_profile p;
    fx_profile(&p);
    snprintf(maps, sizeof(maps),
             "%s7ffff7fd0000-7ffff7fd8000 r-xp 00001000 08:01 400 %s\n"
             "7ffff7fe0000-7ffff7fe8000 r-xp 00001000 08:01 401 %s (deleted)\n", FX_MAPS, exe, exe);
    free(p.maps);
    p.maps = strdup(maps);
    p.maps_len = strlen(maps);
    struct cli_format_options opt = { .binary_hint = exe };
    char *out;
    size_t len;
    cr_assert_eq(fx_write(cli_report_pprof, &p, &opt, &out, &len), 0);
    pb_profile *pb = unpack(out, len);
    cr_assert_eq(pb->n_mapping, 5);
    cr_expect_str_eq(S(pb, pb->mapping[0]->filename), exe);
    /* The deleted copy: same name, " (deleted)" cut, and no build id (the
     * file with that name now is not the one that was mapped). */
    cr_expect_str_eq(S(pb, pb->mapping[1]->filename), exe);
    cr_expect_eq(pb->mapping[1]->memory_start, 0x7ffff7fe0000ull);
    cr_expect_str_eq(S(pb, pb->mapping[1]->build_id), "");
    const char *id = S(pb, pb->mapping[0]->build_id);
    cr_expect(strlen(id) >= 32 && strspn(id, "0123456789abcdef") == strlen(id), "build id '%s'", id);
    cr_expect_str_eq(S(pb, pb->mapping[2]->build_id), "", "no file: no build id");
    perftools__profiles__profile__free_unpacked(pb, NULL);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_pprof, round_trip_through_reader)
{
    struct cli_profile p, q;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    enum cli_profile_kind kind;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_pprof, &p, NULL, &out, &len), 0);
    cr_assert_eq(cli_profile_read_mem(out, len, &q, &kind, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(kind, CLI_PROFILE_PPROF);
    cr_expect_eq(q.pid, 4242);
    cr_expect_eq(q.rate, 4096);
    cr_expect_float_eq(q.duration_s, 2.0, 1e-9);
    cr_expect_eq(q.totals.est_live_bytes, 1004000);
    cr_expect_eq(q.totals.exact_alloc_calls, 3260);
    cr_assert_eq(q.nticks, 3);
    cr_expect_eq(q.ticks[1].live_bytes, 900000);
    cr_expect_float_eq(q.ticks[2].t_s, 1.5, 1e-9);
    cr_assert_eq(q.nstacks, 4);
    const struct cli_stack *s = &q.stacks[0];
    cr_expect_float_eq(s->live_bytes, 1000000, 0.5);
    cr_expect_float_eq(s->alloc_objects, 200, 0.5);
    cr_assert_eq(s->nframes, 4);
    cr_expect_str_eq(s->frames[0].function, "leak_session_buffer");
    cr_expect_str_eq(s->frames[0].file, "/src/app.c");
    cr_expect_eq(s->frames[0].line, 42);
    cr_expect_eq(s->frames[0].addr, PC_LEAK);
    cr_expect_str_eq(s->frames[0].module, FX_APP);
    cr_expect_eq(s->frames[0].module_offset, PC_LEAK - 0x555555554000ull);
    cr_expect(s->frames[1].inlined);
    cr_expect(!s->frames[2].inlined);
    cr_expect_str_eq(s->frames[2].function, "serve");
    cr_expect_eq(s->npcs, 3);
    /* The libc location had no symbol: a frame with its address only. */
    cr_assert_eq(q.stacks[2].nframes, 3);
    cr_expect_null(q.stacks[2].frames[0].function);
    cr_expect_str_eq(q.stacks[2].frames[0].module, FX_LIBC);
    cr_expect(strstr(q.maps, " /opt/app/bin/app\n") != NULL, "%s", q.maps);
    free(out);
    cli_profile_free(&p);
    cli_profile_free(&q);
}
