/* injector_maps.c - parsing /proc/PID/maps text and finding modules in it. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "injector/maps.h"

static const char sample[] =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1234                       /usr/bin/prog\n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000028000 r--p 00000000 08:01 42                         /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f0000028000-7f000019d000 r-xp 00028000 08:01 42                         /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f0000200000-7f0000201000 r-xp 00000000 08:01 77                         /opt/my lib/libx.so (deleted)\n"
    "7f0000300000-7f0000301000 rw-p 00000000 00:00 0 \n"
    "7f0000400000-7f0000401000 r--p 00000000 08:01 55                         /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n";

Test(injector_maps, parses_every_field)
{
    struct inj_maps m;

    cr_assert_eq(inj_maps_parse(sample, &m), 0);
    cr_assert_eq(m.n, 9);
    cr_expect_eq(m.v[1].start, 0x55d0c0a02000ULL);
    cr_expect_eq(m.v[1].end, 0x55d0c0a05000ULL);
    cr_expect_eq(m.v[1].offset, 0x2000);
    cr_expect_eq(m.v[1].inode, 1234);
    cr_expect_str_eq(m.v[1].perms, "r-xp");
    cr_expect_str_eq(m.v[1].path, "/usr/bin/prog");
    cr_expect_str_eq(m.v[2].path, "[heap]");
    cr_expect_str_eq(m.v[5].path, "/opt/my lib/libx.so", "spaces kept, (deleted) cut");
    cr_expect(m.v[5].deleted);
    cr_expect_not(m.v[4].deleted);
    cr_expect_str_eq(m.v[6].path, "", "anonymous mapping");
    inj_maps_free(&m);
}

Test(injector_maps, finds_addresses_and_modules)
{
    struct inj_maps m;
    const struct inj_map *x;

    cr_assert_eq(inj_maps_parse(sample, &m), 0);
    x = inj_maps_find_addr(&m, 0x7f0000030000ULL);
    cr_assert_not_null(x);
    cr_expect_str_eq(x->perms, "r-xp");
    cr_expect_null(inj_maps_find_addr(&m, 0x7f0000250000ULL), "gap between mappings");
    cr_expect_null(inj_maps_find_addr(&m, 0x7f0000028000ULL - 0x28000 - 1));
    x = inj_maps_find_module(&m, inj_maps_is_libc);
    cr_assert_not_null(x);
    cr_expect_eq(x->start, 0x7f0000000000ULL, "lowest mapping of libc");
    x = inj_maps_module_head(&m, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    cr_assert_not_null(x);
    cr_expect_eq(x->offset, 0);
    x = inj_maps_find_module(&m, inj_maps_is_ldso);
    cr_assert_not_null(x);
    cr_expect_eq(x->start, 0x7f0000400000ULL);
    inj_maps_free(&m);
}

Test(injector_maps, recognises_libc_and_ldso_names)
{
    cr_expect(inj_maps_is_libc("/lib/x86_64-linux-gnu/libc.so.6"));
    cr_expect(inj_maps_is_libc("/lib/x86_64-linux-gnu/libc-2.31.so"));
    cr_expect_not(inj_maps_is_libc("/usr/lib/libcrypto.so.3"));
    cr_expect_not(inj_maps_is_libc("/usr/lib/libcap.so.2"));
    cr_expect(inj_maps_is_ldso("/lib64/ld-linux-x86-64.so.2"));
    cr_expect(inj_maps_is_ldso("/lib/x86_64-linux-gnu/ld-2.31.so"));
    cr_expect_not(inj_maps_is_ldso("/usr/lib/libldap.so.2"));
}

Test(injector_maps, reads_own_maps_and_opens_files)
{
    struct inj_maps m;
    const struct inj_map *libc;
    int fd;

    cr_assert_eq(inj_maps_read(getpid(), &m), 0);
    cr_assert_gt(m.n, 5);
    libc = inj_maps_find_module(&m, inj_maps_is_libc);
    cr_assert_not_null(libc);
    fd = inj_maps_open_file(getpid(), libc);
    cr_assert_geq(fd, 0);
    close(fd);
    inj_maps_free(&m);
}
