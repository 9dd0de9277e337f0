/* common_maps_line.c - the one parser of /proc/PID/maps lines. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/maps_line.h"

static bool parse(const char *s, struct hi_maps_line *m)
{
    return hi_maps_line_parse(s, s + strlen(s), m);
}

Test(common_maps_line, a_file_line)
{
    struct hi_maps_line m;
    cr_assert(parse("7f2a1c000000-7f2a1c026000 r-xp 00026000 fe:01 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6", &m));
    cr_expect_eq(m.start, 0x7f2a1c000000ull);
    cr_expect_eq(m.end, 0x7f2a1c026000ull);
    cr_expect_str_eq(m.perms, "r-xp");
    cr_expect_eq(m.offset, 0x26000u);
    cr_expect_eq(m.dev_major, 0xfeu);
    cr_expect_eq(m.dev_minor, 1u);
    cr_expect_eq(m.inode, 332835u);
    cr_expect_eq(m.pathlen, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    cr_expect(!memcmp(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.pathlen));
    cr_expect(!m.deleted);
}

Test(common_maps_line, anonymous_deleted_and_short_lines)
{
    struct hi_maps_line m;
    cr_assert(parse("55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0 ", &m));
    cr_expect_null(m.path);
    cr_assert(parse("7f00-8f00 r--p 00000000 00:05 77 /memfd:libheapinject.so (deleted)", &m));
    cr_expect(m.deleted);
    cr_expect_eq(m.pathlen, strlen("/memfd:libheapinject.so"));
    cr_assert(parse("1000-2000 r--p 0", &m)); /* what old profiles may hold */
    cr_expect_eq(m.inode, 0u);
    cr_expect(!parse("2000-1000 r--p 0 00:00 0", &m)); /* empty range */
    cr_expect(!parse("garbage", &m));
    cr_expect(!parse("1000-2000", &m));
}

Test(common_maps_lines, every_line_and_the_parsed_ones)
{
    static const char text[] = "1000-2000 r--p 0 00:00 0\n"
                               "garbage\n"
                               "\n"
                               "3000-4000 rw-p 00000000 00:00 0 [heap]";
    struct hi_maps_lines it = hi_maps_lines_of(text, strlen(text));
    const char *l, *le;
    unsigned lines = 0;
    while (hi_maps_lines_next(&it, &l, &le)) {
        cr_expect_null(memchr(l, '\n', (size_t)(le - l)));
        lines++;
    }
    cr_expect_eq(lines, 4u); /* the empty line too, the last without a newline too */
    it = hi_maps_lines_of(text, strlen(text));
    struct hi_maps_line m;
    cr_assert(hi_maps_lines_next_parsed(&it, &m));
    cr_expect_eq(m.start, 0x1000u);
    cr_assert(hi_maps_lines_next_parsed(&it, &m));
    cr_expect_eq(m.start, 0x3000u);
    cr_expect_eq(m.pathlen, 6u);
    cr_expect(!hi_maps_lines_next_parsed(&it, &m));
    it = hi_maps_lines_of(NULL, 0);
    cr_expect(!hi_maps_lines_next(&it, &l, &le));
}

Test(common_maps_lines, whole_lines_leave_a_cut_one)
{
    static const char text[] = "1000-2000 r--p 0 00:00 0\n3000-40";
    struct hi_maps_lines it = hi_maps_lines_of(text, strlen(text));
    it.whole = true;
    const char *l, *le;
    cr_assert(hi_maps_lines_next(&it, &l, &le));
    cr_expect_eq(le - l, 24);
    cr_expect(!hi_maps_lines_next(&it, &l, &le));
    cr_expect_eq(it.p, text + 25); /* the cut line, kept for the next read */
}
