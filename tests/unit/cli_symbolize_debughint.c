/* cli_symbolize_debughint.c - the line that says what would give a module debug information. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/symbolize/debughint.h"

Test(debughint, debug_file_by_build_id)
{
    char buf[256];
    cr_expect_str_eq(cli_debughint_debug_file("289ee39f8c", buf, sizeof(buf)),
                     "/usr/lib/debug/.build-id/28/9ee39f8c.debug");
    cr_expect_str_eq(cli_debughint_debug_file(NULL, buf, sizeof(buf)), "");
}

Test(debughint, debug_package_names)
{
    char buf[64];
    cr_expect_str_eq(cli_debughint_debug_package("libc6", buf, sizeof(buf)), "libc6-dbg");
    cr_expect_str_eq(cli_debughint_debug_package("libstdc++6", buf, sizeof(buf)), "libstdc++6-dbgsym");
}

Test(debughint, line_names_what_is_known)
{
    char buf[1024];
    struct cli_debug_hint pkg = { "/usr/lib/libx.so.1", "abcdef", "libx1", NULL }, bare = { "/srv/app", "abcdef", NULL, NULL };
    unsetenv("DEBUGINFOD_URLS");
    if (cli_debughint_debug_archive(NULL) != 0)
        cr_expect_str_eq(cli_debughint_line(&pkg, buf, sizeof(buf)),
                         "install libx1-dbgsym (debug symbols of package libx1), or put its debug file at "
                         "/usr/lib/debug/.build-id/ab/cdef.debug, or set DEBUGINFOD_URLS to a debuginfod server "
                         "(https://debuginfod.debian.net)");
    else /* apt would not find libx1-dbgsym here: the line says where it is */
        cr_expect(strstr(cli_debughint_line(&pkg, buf, sizeof(buf)),
                         "install libx1-dbgsym (debug symbols of package libx1) after adding Debian's debug "
                         "archive to apt (deb http://deb.debian.org/debian-debug ") == buf,
                  "%s", buf);
    cr_expect_str_eq(cli_debughint_line(&bare, buf, sizeof(buf)),
                     "put its debug file at /usr/lib/debug/.build-id/ab/cdef.debug, or set DEBUGINFOD_URLS to "
                     "a debuginfod server");
    setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
    cr_expect(strstr(cli_debughint_line(&bare, buf, sizeof(buf)), "(http://127.0.0.1:1 did not)") != NULL);
    unsetenv("DEBUGINFOD_URLS");
    /* Truncation keeps a terminated string. */
    char small[16];
    cr_expect_eq(strlen(cli_debughint_line(&pkg, small, sizeof(small))), sizeof(small) - 1);
}

Test(debughint, package_of_unowned_or_glob_path)
{
    cr_expect_null(cli_debughint_package("/nonexistent/heapinject-test/libnothing.so"));
    cr_expect_null(cli_debughint_package("/usr/lib/*")); /* a glob would match others */
}

/* apt_dir/sources.list and sources.list.d in both formats; comments and
 * disabled files do not count. */
Test(debughint, debug_archive_in_apt_sources)
{
    char dir[] = "/tmp/hi-apt-XXXXXX", p[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof(p), "%s/sources.list.d", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/sources.list", dir);
    FILE *f = fopen(p, "w");
    fputs("deb http://deb.debian.org/debian bookworm main\n# deb http://deb.debian.org/debian-debug bookworm-debug main\n", f);
    fclose(f);
    snprintf(p, sizeof(p), "%s/sources.list.d/debug.sources.disabled", dir);
    f = fopen(p, "w");
    fputs("URIs: http://deb.debian.org/debian-debug\n", f);
    fclose(f);
    cr_expect_eq(cli_debughint_debug_archive(dir), 0);
    snprintf(p, sizeof(p), "%s/sources.list.d/debug.sources", dir);
    f = fopen(p, "w");
    fputs("Types: deb\nURIs: http://deb.debian.org/debian-debug\nSuites: bookworm-debug\n", f);
    fclose(f);
    cr_expect_eq(cli_debughint_debug_archive(dir), 1);
    cr_expect_eq(cli_debughint_debug_archive("/nonexistent-apt"), -1);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
