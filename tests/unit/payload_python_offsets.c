/* payload_python_offsets.c - which CPython builds have their frames read
 * (payload/python/offsets.c, python.c's pl_python_minor_from_name): the
 * version tables 3.8-3.12, 3.13's _Py_DebugOffsets checked before use, and
 * the builds refused with one line: a free-threaded 3.13t (by its file name
 * and by the debug offsets' own flag), a debug build, a version outside
 * 3.8-3.13. No free-threaded build is installed on the test machines, so
 * this is where its refusal is checked. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "payload/python/offsets.h"
#include "payload/python/runtime.h"

/* The head of 3.13's _Py_DebugOffsets: cookie, version, free_threaded. */
static void debug_head(unsigned char *buf, size_t len, uint64_t version, uint64_t free_threaded)
{
    memset(buf, 0, len);
    memcpy(buf, "xdebugpy", 8);
    memcpy(buf + 8, &version, 8);
    memcpy(buf + 16, &free_threaded, 8);
}

Test(python_offsets, free_threaded_debug_offsets_refused)
{
    unsigned char buf[4096];
    struct pl_py_offsets o;
    const char *why = "";
    debug_head(buf, sizeof(buf), 0x030d01f0u, 1);
    cr_assert_eq(pl_py_offsets_debug(buf, sizeof(buf), &o, &why), -1);
    cr_assert_str_eq(why, "a free-threaded build (its frames are not read)");
}

Test(python_offsets, debug_offsets_checked_before_use)
{
    unsigned char buf[4096];
    struct pl_py_offsets o;
    const char *why = "";
    debug_head(buf, sizeof(buf), 0x030d01f0u, 0);
    memcpy(buf, "notdebug", 8);
    cr_assert_eq(pl_py_offsets_debug(buf, sizeof(buf), &o, &why), -1);
    cr_assert(strstr(why, "cookie"), "%s", why);
    debug_head(buf, sizeof(buf), 0x030c04f0u, 0); /* 3.12's version in a 3.13 layout */
    cr_assert_eq(pl_py_offsets_debug(buf, sizeof(buf), &o, &why), -1);
    cr_assert(strstr(why, "another version"), "%s", why);
    debug_head(buf, sizeof(buf), 0x030d01f0u, 0); /* every size 0: no offset fits */
    cr_assert_eq(pl_py_offsets_debug(buf, sizeof(buf), &o, &why), -1);
    cr_assert(strstr(why, "out of range"), "%s", why);
    cr_assert_eq(pl_py_offsets_debug(buf, 16, &o, &why), -1);
    cr_assert(strstr(why, "too short"), "%s", why);
}

Test(python_offsets, tables_for_3_8_to_3_12_only)
{
    struct pl_py_offsets o;
    const char *why = "";
    for (unsigned minor = 8; minor <= 12; minor++) {
        cr_assert_eq(pl_py_offsets_table(minor, &o, &why), 0, "3.%u", minor);
        cr_assert_eq(o.minor, minor);
    }
    cr_assert_eq(pl_py_offsets_table(7, &o, &why), -1);
    cr_assert(strstr(why, "not supported"), "%s", why);
    cr_assert_eq(pl_py_offsets_table(13, &o, &why), -1);
    cr_assert(strstr(why, "debug_offsets"), "%s", why);
}

Test(python_offsets, builds_told_by_their_file_name)
{
    char flag = 'x';
    cr_assert_eq(pl_python_minor_from_name("/usr/lib/x86_64-linux-gnu/libpython3.13t.so.1.0", &flag), 13);
    cr_assert_eq(flag, 't', "free-threaded");
    cr_assert_eq(pl_python_minor_from_name("/usr/bin/python3.12d", &flag), 12);
    cr_assert_eq(flag, 'd', "debug");
    cr_assert_eq(pl_python_minor_from_name("/usr/bin/python3.11", &flag), 11);
    cr_assert_eq(flag, '\0');
    cr_assert_eq(pl_python_minor_from_name("/root/.pyenv/versions/3.10.14/lib/libpython3.10.so.1.0", &flag), 10);
    cr_assert_eq(flag, '\0');
    cr_assert_eq(pl_python_minor_from_name("/opt/python3.9/bin/ruby", &flag), 0, "a folder's name is not the module's");
}
