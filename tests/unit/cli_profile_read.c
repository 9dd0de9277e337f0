/* cli_format_read.c - profile readers on every format heapinject writes,
 * and on corrupt, truncated and foreign input: an error in words, never a
 * crash (this binary runs under ASan/UBSan). */
#include <errno.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/util/exitcode.h"
#include "cli/profile/read.h"
#include "cli/report/report.h"
#include "cli/report/heap.h"
#include "cli/report/pprof.h"
#include "tests/unit/cli_report_fixture.h"

static int rd(const void *data, size_t len, struct cli_profile *q, char *why)
{
    return cli_profile_read_mem(data, len, q, NULL, why, CLI_PROFILE_READ_WHY_LEN);
}

static void expect_bad(const void *data, size_t len, const char *reason_part)
{
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    int rc = rd(data, len, &q, why);
    cr_expect_eq(rc, -EBADMSG, "accepted %zu bytes", len);
    cr_expect(why[0], "no reason given");
    if (reason_part)
        cr_expect(strstr(why, reason_part) != NULL, "reason \"%s\" lacks \"%s\"", why, reason_part);
    cr_expect_eq(q.nstacks, 0);
    cr_expect_null(q.stacks);
}

/* gzip of data into a malloc'ed buffer; returns its length. */
static size_t gzip_mem(const void *data, size_t len, char **out)
{
    size_t gzlen;
    FILE *mem = open_memstream(out, &gzlen);
    z_stream ds = { 0 };
    unsigned char buf[1 << 16];
    int zr;
    cr_assert_eq(deflateInit2(&ds, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    ds.next_in = (unsigned char *)data;
    ds.avail_in = (uInt)len;
    do {
        ds.next_out = buf;
        ds.avail_out = sizeof(buf);
        zr = deflate(&ds, Z_FINISH);
        fwrite(buf, 1, sizeof(buf) - ds.avail_out, mem);
    } while (zr != Z_STREAM_END);
    deflateEnd(&ds);
    fclose(mem);
    return gzlen;
}

Test(cli_format_read, detects_formats)
{
    cr_expect_eq(cli_profile_detect("\x1f\x8b\x08", 3), CLI_PROFILE_PPROF);
    cr_expect_eq(cli_profile_detect(" \n{", 3), CLI_PROFILE_JSON);
    cr_expect_eq(cli_profile_detect("heap profile: 1: 2", 18), CLI_PROFILE_HEAP);
    cr_expect_eq(cli_profile_detect("main;foo 12\n", 12), CLI_PROFILE_UNKNOWN);
}

Test(cli_format_read, foreign_and_empty)
{
    expect_bad("", 0, "empty");
    expect_bad("main;foo 12\n", 12, "cannot be read back");
    expect_bad("<?xml version=\"1.0\"?><svg/>", 27, NULL);
    expect_bad("desc: (none)\ncmd: x\n", 20, NULL);
    expect_bad("{\"schema\": \"something-else\", \"version\": 1}", 42, "schema");
    expect_bad("{\"schema\": \"heapinject-profile\", \"version\": 3, \"stacks\": []}", 60, "version 3");
    expect_bad("{\"schema\": \"heapinject-profile\", \"version\": 2, \"stacks\": []}", 60, "\"frames\" table");
    expect_bad("{\"schema\": \"heapinject-profile\", \"version\": 1}", 46, "stacks");
    expect_bad("[1, 2]", 6, NULL);
    expect_bad("heap profile: 1: 2 [1: 2] @ growthz\n", 36, "growthz");
    /* jemalloc's own format */
    const char *je = "heap_v2/524288\n  t*: 1: 100 [0: 0]\n";
    expect_bad(je, strlen(je), NULL);
    const char *je2 = "heap profile: 1: 2 [1: 2] @ heap_v2/524288\n  t*: 1: 2 [0: 0]\n";
    expect_bad(je2, strlen(je2), "jemalloc");
    /* gzip, but not a profile */
    char *gz;
    size_t gzlen = gzip_mem("hello, world", 12, &gz);
    expect_bad(gz, gzlen, "pprof");
    free(gz);
}

Test(cli_format_read, pprof_truncated_at_every_length)
{
    struct cli_profile p, q;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_pprof, &p, NULL, &out, &len), 0);
    for (size_t n = 0; n < len; n++) {
        int rc = rd(out, n, &q, why);
        cr_assert_eq(rc, -EBADMSG, "a pprof file cut at %zu of %zu bytes was accepted", n, len);
    }
    cr_assert_eq(rd(out, len, &q, why), 0, "%s", why);
    cli_profile_free(&q);
    free(out);
    cli_profile_free(&p);
}

/* Flipped bits inside the compressed data: gzip's CRC catches them; inside
 * the protobuf (rebuilt into a valid gzip stream) anything may come out,
 * but never a crash, and an accepted profile is a consistent one. */
Test(cli_format_read, pprof_corrupt_bytes)
{
    struct cli_profile p, q;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_pprof, &p, NULL, &out, &len), 0);
    for (size_t i = 10; i < len; i += 3) {
        out[i] ^= 0x5a;
        int rc = rd(out, len, &q, why);
        cr_expect(rc == -EBADMSG || rc == 0);
        if (rc == 0)
            cli_profile_free(&q);
        out[i] ^= 0x5a;
    }
    free(out);

    /* Corrupt the raw protobuf and gzip it again. */
    cr_assert_eq(fx_write(cli_report_pprof, &p, NULL, &out, &len), 0);
    unsigned char *raw = malloc(1 << 20);
    z_stream zs = { 0 };
    cr_assert_eq(inflateInit2(&zs, 31), Z_OK);
    zs.next_in = (unsigned char *)out;
    zs.avail_in = (uInt)len;
    zs.next_out = raw;
    zs.avail_out = 1 << 20;
    cr_assert_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t rawlen = (1 << 20) - zs.avail_out;
    inflateEnd(&zs);
    size_t accepted = 0, refused = 0;
    for (size_t i = 0; i < rawlen; i++) {
        for (int pass = 0; pass < 2; pass++) {
            unsigned char save = raw[i];
            raw[i] = pass ? 0xff : (unsigned char)(save ^ 0x01);
            char *gz;
            size_t gzlen = gzip_mem(raw, rawlen, &gz);
            int rc = rd(gz, gzlen, &q, why);
            cr_assert(rc == -EBADMSG || rc == 0, "rc %d", rc);
            if (rc == 0) {
                accepted++;
                /* Whatever was accepted must be usable by a writer. */
                char *txt;
                size_t tl;
                cr_expect_eq(fx_write(cli_report_heap, &q, NULL, &txt, &tl), 0);
                free(txt);
                cli_profile_free(&q);
            } else {
                refused++;
            }
            free(gz);
            raw[i] = save;
        }
    }
    cr_expect(refused > 0 && accepted > 0, "refused %zu accepted %zu", refused, accepted);
    free(raw);
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_read, heap_truncated_at_every_length)
{
    struct cli_profile p, q;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    fx_profile(&p);
    cr_assert_eq(fx_write(cli_report_heap, &p, NULL, &out, &len), 0);
    const char *maps = strstr(out, "MAPPED_LIBRARIES:\n");
    cr_assert(maps);
    size_t maps_at = (size_t)(maps - out) + strlen("MAPPED_LIBRARIES:");
    for (size_t n = 0; n < len; n++) {
        /* A copy of exactly n bytes, so ASan sees reads past the end. */
        char *cut = malloc(n ? n : 1);
        memcpy(cut, out, n);
        int rc = rd(cut, n, &q, why);
        if (n < maps_at)
            cr_assert_eq(rc, -EBADMSG, "a heap file cut at %zu of %zu bytes was accepted", n, len);
        else
            cr_assert(rc == 0 || rc == -EBADMSG);
        if (rc == 0)
            cli_profile_free(&q);
        free(cut);
    }
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_read, heap_garbage_lines)
{
    static const char *const bad[] = {
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0xzz\nMAPPED_LIBRARIES:\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0x11111111111111111\nMAPPED_LIBRARIES:\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 99999999999999999999 [1: 10] @ 0x1\nMAPPED_LIBRARIES:\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/0\n1: 10 [1: 10] @ 0x1\nMAPPED_LIBRARIES:\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1 10 1 10 @ 0x1\nMAPPED_LIBRARIES:\n",
        "heap profile: 2: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0x1\nMAPPED_LIBRARIES:\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0x1\n",
        "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @ 0x1\0\nMAPPED_LIBRARIES:\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n = strlen(bad[i]);
        if (i == 7)
            n = 70;
        expect_bad(bad[i], n, NULL);
    }
    /* Many addresses on one line are refused, not overflowed. */
    struct cli_buf b = { 0 };
    cli_buf_addf(&b, "heap profile: 1: 10 [1: 10] @ heap_v2/512\n1: 10 [1: 10] @");
    for (int i = 0; i < 5000; i++)
        cli_buf_addf(&b, " 0x%x", i + 1);
    cli_buf_addf(&b, "\nMAPPED_LIBRARIES:\n");
    expect_bad(b.data, b.len, "more than");
    free(b.data);
}

Test(cli_format_read, json_round_trip_and_truncation)
{
    struct cli_profile p, q;
    struct cli_report_options ro;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    enum cli_profile_kind kind;
    fx_profile(&p);
    memset(&ro, 0, sizeof(ro));
    ro.format = "json";
    FILE *f = open_memstream(&out, &len);
    cr_assert_eq(cli_report_write(&p, &ro, f), 0);
    fclose(f);
    cr_assert_eq(cli_profile_read_mem(out, len, &q, &kind, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(kind, CLI_PROFILE_JSON);
    cr_expect_eq(q.pid, 4242);
    cr_expect_eq(q.rate, 4096);
    cr_expect_eq(q.totals.est_live_bytes, 1004000);
    cr_expect_eq(q.totals.exact_alloc_calls, 3260);
    cr_assert_eq(q.nstacks, 4);
    cr_expect_float_eq(q.stacks[0].live_bytes, 1000000, 0.5);
    cr_expect_eq(q.stacks[0].raw_alloc_objects, 182);
    cr_assert_eq(q.stacks[0].nframes, 4);
    cr_expect_str_eq(q.stacks[0].frames[1].function, "handle_request");
    cr_expect(q.stacks[0].frames[1].inlined);
    cr_expect_eq(q.stacks[0].frames[0].module_offset, PC_LEAK - 0x555555554000ull);
    cr_assert_eq(q.stacks[0].npcs, 4);
    cr_expect_eq(q.stacks[0].pcs[0], PC_OWN, "raw PCs as captured");
    cr_expect_eq(q.stacks[0].growth[0], 100000);
    cr_expect_eq(q.stacks[0].growth[7], 800000);
    cr_expect_eq(q.stacks[1].growth[7], -1);
    cr_expect_eq(q.tick_ms, 500);
    cr_expect_eq(q.attach_ns, 1000000000ull);
    cr_expect_eq(q.maps_len, strlen(FX_MAPS));
    cr_expect_str_eq(q.stacks[2].frames[1].function, "operator;weird <T> 12");
    cr_assert_eq(q.nticks, 3);
    cr_expect_eq(q.ticks[2].rss_bytes, 12u << 20);
    cli_profile_free(&q);

    for (size_t n = 0; n < len; n++) {
        char *cut = malloc(n ? n : 1);
        memcpy(cut, out, n);
        int rc = rd(cut, n, &q, why);
        /* Only trailing white space may go. */
        if (strspn(out + n, " \n") != len - n)
            cr_assert_eq(rc, -EBADMSG, "JSON cut at %zu of %zu bytes was accepted", n, len);
        if (rc == 0)
            cli_profile_free(&q);
        free(cut);
    }
    free(out);
    cli_profile_free(&p);
}

Test(cli_format_read, json_hostile_values)
{
    static const char *const bad[] = {
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[{\"live_bytes\":-1,\"live_objects\":0,\"alloc_bytes\":0,\"alloc_objects\":0,\"frames\":[]}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[{\"live_bytes\":1,\"live_objects\":0,\"alloc_bytes\":0,\"alloc_objects\":0,\"frames\":[{\"addr\":\"12\"}]}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[{\"live_bytes\":1,\"live_objects\":0,\"alloc_bytes\":0,\"alloc_objects\":0,\"frames\":[{\"addr\":\"0x12\",\"line\":1e99}]}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"histogram\":[{\"min_size\":3}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"histogram\":[{\"min_size\":1e300}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"growing\":[{\"stack\":5,\"growth\":[]}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"pid\":\"x\"}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"rate\":18446744073709551616}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"note\":\"\\ud800\"}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"note\":\"a\x01\"}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[]} x",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"target_exit\":[]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"target_exit\":{\"signal\":300}}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"target_exit\":{\"as_of_s_before\":-1}}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"target_exit\":{\"snapshot\":\"pressure\"}}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"debuginfo_missing\":[{\"build_id\":\"ab\"}]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[],\"debuginfo_missing\":[3]}",
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[01]}",
        "{\"schema\":\"heapinject-profile\",\"version\":2,\"stacks\":[],\"stack_walks\":[]}",
        "{\"schema\":\"heapinject-profile\",\"version\":2,\"stacks\":[],\"stack_walks\":{\"walks\":-1}}",
        "{\"schema\":\"heapinject-profile\",\"version\":2,\"stacks\":[],\"stack_walks\":{\"walks\":3,\"truncated\":4}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_bad(bad[i], strlen(bad[i]), NULL);
    /* Deep nesting is refused, not recursed into. */
    struct cli_buf b = { 0 };
    for (int i = 0; i < 100000; i++)
        cli_buf_addc(&b, '[');
    b.data[0] = '{';
    expect_bad(b.data, b.len, NULL);
    free(b.data);
}

Test(cli_format_read, file_errors_and_messages)
{
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    cr_expect_eq(cli_profile_read("/nonexistent/x.pb.gz", &q, NULL, why, sizeof(why)), -ENOENT);
    cr_expect_eq(cli_profile_read("/tmp", &q, NULL, why, sizeof(why)), -EISDIR);
    char path[] = "/tmp/hi-format-read-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "GIF89a", 6), 6);
    close(fd);
    cr_expect_eq(cli_profile_read(path, &q, NULL, why, sizeof(why)), -EBADMSG);
    cr_expect_eq(cli_profile_read_perror("report", path, -EBADMSG, why), CLI_EXIT_BADFILE);
    cr_expect_eq(cli_profile_read_perror("report", path, -ENOENT, why), CLI_EXIT_FAILURE);
    unlink(path);
}

/* Schema version 2 (issue 17): each distinct frame once in "frames", the
 * stacks' frames as indices; the fixture's four stacks share "main". */
Test(cli_format_read, json_v2_frame_table_dedupes_and_reads_back)
{
    struct cli_profile p, q;
    struct cli_report_options ro;
    char *out, why[CLI_PROFILE_READ_WHY_LEN];
    size_t len;
    fx_profile(&p);
    memset(&ro, 0, sizeof(ro));
    ro.format = "json";
    FILE *f = open_memstream(&out, &len);
    cr_assert_eq(cli_report_write(&p, &ro, f), 0);
    fclose(f);
    cr_expect(strstr(out, "\"version\": 2") != NULL);
    size_t frames = 0, addrs = 0;
    for (size_t i = 0; i < p.nstacks; i++)
        frames += p.stacks[i].nframes ? p.stacks[i].nframes : p.stacks[i].npcs;
    for (const char *a = out; (a = strstr(a, "\"addr\":")); a++)
        addrs++;
    cr_expect_lt(addrs, frames, "%zu frames written for %zu in the stacks: no frame shared", addrs, frames);
    cr_assert_eq(rd(out, len, &q, why), 0, "%s", why);
    cr_assert_eq(q.nstacks, p.nstacks);
    for (size_t i = 0; i < p.nstacks; i++) {
        cr_assert_eq(q.stacks[i].nframes, p.stacks[i].nframes, "stack %zu", i);
        for (uint32_t k = 0; k < p.stacks[i].nframes; k++) {
            const struct cli_frame *a = &p.stacks[i].frames[k], *b = &q.stacks[i].frames[k];
            cr_expect_eq(a->addr, b->addr);
            cr_expect_eq(a->line, b->line);
            cr_expect_eq(a->inlined, b->inlined);
            cr_expect(!a->function == !b->function && (!a->function || !strcmp(a->function, b->function)));
            cr_expect(!a->file == !b->file && (!a->file || !strcmp(a->file, b->file)));
        }
    }
    /* The table's strings are one pool's: "main" is one string. */
    cr_expect(q.stacks[0].shared_strings && q.strings);
    cr_expect_eq(q.stacks[0].frames[3].function, q.stacks[1].frames[1].function);
    cli_profile_free(&q);
    free(out);
    cli_profile_free(&p);
}

/* Files of schema version 1 (frames inline in each stack) still read. */
Test(cli_format_read, json_v1_inline_frames_still_read)
{
    static const char v1[] =
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"rate\":512,"
        "\"stacks\":[{\"id\":0,\"live_bytes\":100,\"live_objects\":1,\"alloc_bytes\":200,\"alloc_objects\":2,"
        "\"pcs\":[\"0x401010\",\"0x401020\"],"
        "\"frames\":[{\"addr\":\"0x401010\",\"function\":\"leaf\",\"module\":\"/bin/app\",\"module_offset\":\"0x1010\","
        "\"file\":\"a.c\",\"line\":3,\"inlined\":false},"
        "{\"addr\":\"0x401020\",\"function\":\"main\",\"module\":\"/bin/app\",\"module_offset\":\"0x1020\","
        "\"file\":\"a.c\",\"line\":9,\"inlined\":false}]}]}";
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    cr_assert_eq(rd(v1, strlen(v1), &q, why), 0, "%s", why);
    cr_assert_eq(q.nstacks, 1);
    cr_assert_eq(q.stacks[0].nframes, 2);
    cr_expect_str_eq(q.stacks[0].frames[0].function, "leaf");
    cr_expect_str_eq(q.stacks[0].frames[1].function, "main");
    cr_expect_eq(q.stacks[0].frames[1].line, 9);
    cr_expect_eq(q.stacks[0].npcs, 2);
    cr_expect_eq(q.stacks[0].pcs[1], 0x401020u);
    cr_expect(!q.stacks[0].shared_strings);
    cli_profile_free(&q);
}

/* A report of several processes writes "pymalloc" with the sums only (no
 * "status"): it read as an empty profile, its stacks dropped (py_gunicorn). */
Test(cli_format_read, json_pymalloc_sums_without_status_read)
{
    static const char doc[] =
        "{\"schema\":\"heapinject-profile\",\"version\":1,\"pid\":42,\"rate\":512,"
        "\"pymalloc\":{\"live_bytes\":64,\"live_objects\":1,\"alloc_bytes\":64,\"alloc_objects\":1,"
        "\"stacks\":1,\"inside\":\"mmap\"},"
        "\"stacks\":[{\"id\":0,\"kind\":\"pymalloc\",\"live_bytes\":64,\"live_objects\":1,\"alloc_bytes\":64,"
        "\"alloc_objects\":1,\"pcs\":[\"0x401010\"],"
        "\"frames\":[{\"addr\":\"0x401010\",\"function\":\"leaf\",\"module\":\"/bin/app\","
        "\"module_offset\":\"0x1010\",\"file\":\"a.c\",\"line\":3,\"inlined\":false}]}]}";
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    cr_assert_eq(rd(doc, strlen(doc), &q, why), 0, "%s", why);
    cr_expect_eq(q.pid, 42);
    cr_assert_eq(q.nstacks, 1);
    cr_expect_eq(q.stacks[0].kind, HI_KIND_PYMALLOC);
    cr_expect(!q.have_pymalloc, "a status read where there was none");
    cli_profile_free(&q);
}

Test(cli_format_read, json_v2_hostile_frame_indices)
{
#define V2(TABLE, FRAMES)                                                                                  \
    "{\"schema\":\"heapinject-profile\",\"version\":2,\"frames\":" TABLE ",\"stacks\":[{\"live_bytes\":1," \
    "\"live_objects\":1,\"alloc_bytes\":1,\"alloc_objects\":1,\"frames\":" FRAMES "}]}"
    static const char *const bad[] = {
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[1]"),        /* past the table */
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[-1]"),
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[0.5]"),
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[\"0\"]"),
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[{\"addr\":\"0x10\"}]"), /* v1 frame in v2 */
        V2("[]", "[0]"),
        V2("[{\"addr\":\"0x10\",\"function\":\"f\"}]", "[18446744073709551615]"),
        V2("[7]", "[0]"),                                                     /* a table entry not a frame */
        V2("{}", "[0]"),
        V2("[{\"function\":\"f\"}]", "[0]"),                                 /* no addr */
    };
#undef V2
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_bad(bad[i], strlen(bad[i]), NULL);
    static const char ok[] =
        "{\"schema\":\"heapinject-profile\",\"version\":2,\"frames\":[{\"addr\":\"0x10\",\"function\":\"f\","
        "\"inlined\":false}],\"stacks\":[{\"live_bytes\":1,\"live_objects\":1,\"alloc_bytes\":1,"
        "\"alloc_objects\":1,\"frames\":[0,0]}]}";
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    cr_assert_eq(rd(ok, strlen(ok), &q, why), 0, "%s", why);
    cr_expect_eq(q.stacks[0].nframes, 2);
    cr_expect_eq(q.stacks[0].npcs, 2, "a PC per physical frame when \"pcs\" is absent");
    cr_expect_eq(q.stacks[0].pcs[1], 0x10u);
    cli_profile_free(&q);
}

/* What the live report said of its process's end and of missing debug
 * information comes back with the file (heapinject report FILE). */
Test(cli_format_read, json_target_exit_note_and_debug_hints_read_back)
{
    static const char doc[] =
        "{\"schema\":\"heapinject-profile\",\"version\":2,\"frames\":[],\"stacks\":[],"
        "\"note\":\"as of 0.0 s before the process exited\","
        "\"target_exit\":{\"as_of_s_before\":0.012,\"stacks\":true,\"signal\":9,\"exit_code\":null,"
        "\"snapshot\":\"pressure\",\"pressure\":{\"measure\":\"cgroup v1\",\"usage_bytes\":121,\"limit_bytes\":128}},"
        "\"debuginfo_missing\":[{\"module\":\"/usr/bin/x\",\"build_id\":\"abcd\",\"package\":\"x\"}],"
        "\"stack_walks\":{\"walks\":948,\"truncated\":474}}";
    struct cli_profile q;
    char why[CLI_PROFILE_READ_WHY_LEN];
    cr_assert_eq(rd(doc, strlen(doc), &q, why), 0, "%s", why);
    cr_expect_str_eq(q.note, "as of 0.0 s before the process exited");
    cr_assert(q.have_exit);
    cr_expect(q.exit.status_known);
    cr_expect_eq(q.exit.signal, 9);
    cr_expect(q.exit.stacks);
    cr_expect_eq(q.exit.pushed, 2);
    cr_expect_str_eq(q.exit.pressure_measure, "cgroup v1");
    cr_expect_eq(q.exit.pressure_usage, 121u);
    cr_expect_eq(q.exit.pressure_limit, 128u);
    cr_assert_eq(q.ndebug_hints, 1);
    cr_expect_str_eq(q.debug_hints[0].module, "/usr/bin/x");
    cr_expect_str_eq(q.debug_hints[0].package, "x");
    cr_assert(q.have_walks);
    cr_expect_eq(q.walks.walks, 948u);
    cr_expect_eq(q.walks.truncated, 474u);
    cli_profile_free(&q);

    static const char plain[] = "{\"schema\":\"heapinject-profile\",\"version\":1,\"stacks\":[]}";
    cr_assert_eq(rd(plain, strlen(plain), &q, why), 0, "%s", why);
    cr_expect(!q.have_exit && !q.note && !q.ndebug_hints && !q.have_walks);
    cli_profile_free(&q);
}
