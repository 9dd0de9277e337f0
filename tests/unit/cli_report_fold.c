/* cli_report_fold.c - which frames the text report folds under its cap. */
#include <criterion/criterion.h>

#include "cli/report/fold.h"

#define LIB_H "/usr/include/c++/12/bits/stl_tree.h"
#define OWN_C "/src/app/main.cc"

static struct cli_frame fr(const char *file, const char *module, bool inlined)
{
    return (struct cli_frame){ .file = (char *)file, .module = (char *)module, .inlined = inlined };
}

Test(fold, library_sources_and_modules)
{
    struct cli_frame a = fr(LIB_H, "/usr/bin/app", true), b = fr(OWN_C, "/usr/bin/app", false),
                     c = fr(NULL, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false),
                     d = fr("/rustc/59807616/library/alloc/src/alloc.rs", "/srv/app", true),
                     e = fr("library/core/src/ops/function.rs", "/srv/app", true),
                     f = fr(NULL, "/srv/app", false);
    cr_expect(cli_fold_is_library(&a));
    cr_expect(!cli_fold_is_library(&b));
    cr_expect(cli_fold_is_library(&c));
    cr_expect(cli_fold_is_library(&d));
    cr_expect(cli_fold_is_library(&e));
    cr_expect(!cli_fold_is_library(&f));
    struct cli_frame g = fr("Objects/obmalloc.c", "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", true),
                     h = fr("../Objects/obmalloc.c", "/usr/local/bin/python3.12", true),
                     i = fr("ext/my_ext.c", "/srv/app/my_ext.cpython-311-x86_64-linux-gnu.so", false);
    cr_expect(cli_fold_is_library(&g));
    cr_expect(cli_fold_is_library(&h));
    cr_expect(!cli_fold_is_library(&i)); /* an extension module is the program's */
}

/* operator new (physical, libstdc++) <- 6 inlined STL frames <- add_entry
 * <- main: the STL run is one line, its outermost frame. */
Test(fold, inlined_library_run_is_one_line)
{
    struct cli_frame frames[10];
    frames[0] = fr(NULL, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false);
    for (int i = 1; i <= 6; i++)
        frames[i] = fr(LIB_H, "/usr/bin/app", true);
    frames[7] = fr(OWN_C, "/usr/bin/app", false); /* add_entry, physical */
    frames[8] = fr(OWN_C, "/usr/bin/app", false); /* main */
    frames[9] = fr(NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", false);
    struct cli_stack s = { .nframes = 10, .frames = frames };
    struct cli_fold_line lines[8];
    uint32_t rest, n = cli_fold_lines(&s, lines, 8, &rest);
    cr_assert_eq(n, 5);
    cr_expect_eq(lines[0].frame, 0);
    cr_expect_eq(lines[0].folded, 0); /* physical: never folded into the next */
    cr_expect_eq(lines[1].frame, 6);
    cr_expect_eq(lines[1].folded, 5);
    cr_expect_eq(lines[2].frame, 7);
    cr_expect_eq(lines[3].frame, 8);
    cr_expect_eq(lines[4].frame, 9);
    cr_expect_eq(rest, 0);
}

/* The program's own inlined frames are never folded; the cap counts lines
 * and rest what follows the last line. */
Test(fold, own_frames_kept_and_cap)
{
    struct cli_frame frames[12];
    for (int i = 0; i < 3; i++)
        frames[i] = fr(LIB_H, "/usr/bin/app", true);
    for (int i = 3; i < 12; i++)
        frames[i] = fr(OWN_C, "/usr/bin/app", i < 11);
    struct cli_stack s = { .nframes = 12, .frames = frames };
    struct cli_fold_line lines[8];
    uint32_t rest, n = cli_fold_lines(&s, lines, 8, &rest);
    cr_assert_eq(n, 8);
    /* The last library frame is followed by the program's: the run ends there. */
    cr_expect_eq(lines[0].frame, 2);
    cr_expect_eq(lines[0].folded, 2);
    for (uint32_t i = 1; i < 8; i++) {
        cr_expect_eq(lines[i].frame, i + 2);
        cr_expect_eq(lines[i].folded, 0);
    }
    cr_expect_eq(rest, 2);
}
