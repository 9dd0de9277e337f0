/* cli_symbolize_aptlists.c - package names read from apt's lists as they
 * are kept: plain, gzip'd and lz4'd, and dpkg's status. */
#include <criterion/criterion.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/symbolize/aptlists.h"

static char dir[64], lists[96], status[96];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hi-aptlists.XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(lists, sizeof(lists), "%s/lists", dir);
    snprintf(status, sizeof(status), "%s/status", dir);
    cr_assert(mkdir(lists, 0755) == 0);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_expect(system(cmd) == 0);
}

static void write_plain(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", lists, name);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void write_gz(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", lists, name);
    gzFile f = gzopen(p, "wb");
    cr_assert(f);
    cr_assert(gzputs(f, text) > 0);
    gzclose(f);
}

static void write_lz4(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", lists, name);
    size_t len = strlen(text), cap = LZ4F_compressFrameBound(len, NULL);
    char *out = malloc(cap);
    size_t n = LZ4F_compressFrame(out, cap, text, len, NULL);
    cr_assert(!LZ4F_isError(n));
    FILE *f = fopen(p, "w");
    cr_assert(f);
    cr_assert(fwrite(out, 1, n, f) == n);
    fclose(f);
    free(out);
}

/* A list of filler records big enough to cross the readers' 64 KiB and
 * 256 KiB chunks, with the given record at its end. */
static char *big_list(const char *last)
{
    size_t cap = 2 << 20, len = 0;
    char *s = malloc(cap);
    for (int i = 0; len < (1 << 20) + 777; i++)
        len += (size_t)snprintf(s + len, cap - len, "Package: filler%d\nVersion: 1.%d\nDescription: x\n\n", i, i);
    snprintf(s + len, cap - len, "%s", last);
    return s;
}

TestSuite(aptlists, .init = setup, .fini = teardown);

Test(aptlists, names_in_plain_gzip_and_lz4_lists_and_status)
{
    write_plain("deb.example_dists_x_main_binary-amd64_Packages", "Package: alpha-dbg\nVersion: 1\n\n");
    write_gz("deb.example_dists_y_main_binary-amd64_Packages.gz", "Package: beta-dbg\nVersion: 1\n\n");
    char *big = big_list("Package: gamma-dbg\nVersion: 2\n");
    write_lz4("deb.example_dists_z_main_binary-amd64_Packages.lz4", big);
    free(big);
    write_plain("deb.example_dists_z_InRelease", "Package: not-a-list\n");
    FILE *f = fopen(status, "w");
    fputs("Package: delta-dbg\nStatus: install ok installed\n", f);
    fclose(f);
    const char *names[] = { "alpha-dbg", "beta-dbg", "gamma-dbg", "delta-dbg", "not-a-list", "alpha", "filler7-dbg" };
    bool seen[7];
    cr_assert_eq(cli_aptlists_known(lists, status, names, 7, seen), 0);
    bool want[7] = { true, true, true, true, false, false, false };
    for (int i = 0; i < 7; i++)
        cr_expect_eq(seen[i], want[i], "%s: seen %d", names[i], seen[i]);
}

Test(aptlists, a_line_split_between_chunks_and_an_overlong_line)
{
    /* The reader takes 64 KiB at a time. A 1,018-byte line ends in text
     * that looks like a Package line and that starts exactly at the first
     * boundary; "Package: split-dbg" starts 5 bytes before the second. */
    size_t cap = 3 << 17;
    char *s = malloc(cap);
    memset(s, 'x', cap);
    s[65536 - 1001] = '\n';
    memcpy(s + 65536, "Package: tail-dbg\n", 18);
    s[131072 - 6] = '\n';
    memcpy(s + 131072 - 5, "Package: split-dbg\n", 19);
    s[131072 + 14] = '\0';
    write_plain("a_Packages", s);
    free(s);
    const char *names[] = { "split-dbg", "tail-dbg" };
    bool seen[2];
    cr_assert_eq(cli_aptlists_known(lists, status, names, 2, seen), 0);
    cr_expect(seen[0], "a Package line split between two reads was not seen");
    cr_expect(!seen[1], "the tail of a long line was taken for a Package line");
}

Test(aptlists, lists_not_read_here_leave_the_answer_to_apt_cache)
{
    const char *names[] = { "alpha-dbg" };
    bool seen[1];
    cr_expect_eq(cli_aptlists_known(lists, status, names, 1, seen), -1, "no list at all");
    write_plain("a_Packages", "Package: alpha-dbg\n");
    write_plain("b_Packages.xz", "\xfd" "7zXZ");
    cr_expect_eq(cli_aptlists_known(lists, status, names, 1, seen), -1, "an .xz list");
    cr_expect_eq(cli_aptlists_known("/nonexistent/lists", status, names, 1, seen), -1);
    write_plain("b_Packages.xz", "");
    char p[256];
    snprintf(p, sizeof(p), "%s/b_Packages.xz", lists);
    unlink(p);
    write_plain("c_Packages.lz4", "not an lz4 frame at all");
    cr_expect_eq(cli_aptlists_known(lists, status, names, 1, seen), -1, "a corrupt lz4 list");
}
