/* common_open_regular.c - files named by the target: only regular files,
 * never a FIFO's blocking open, never a symbolic link put on a maps path. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/open_regular.h"

static char dir[PATH_MAX];

static void make_tree(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hi-openreg-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/lib.so", dir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("ELF?", f);
    fclose(f);
    snprintf(p, sizeof(p), "%s/fifo", dir);
    cr_assert_eq(mkfifo(p, 0600), 0);
    snprintf(p, sizeof(p), "%s/swapped.so", dir);
    cr_assert_eq(symlink("lib.so", p), 0);
    snprintf(p, sizeof(p), "%s/sub", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/linkdir", dir);
    cr_assert_eq(symlink("sub", p), 0);
    snprintf(p, sizeof(p), "%s/sub/inner.so", dir);
    f = fopen(p, "w");
    cr_assert_not_null(f);
    fclose(f);
}

static void remove_tree(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(common_open_regular, .init = make_tree, .fini = remove_tree);

static int open_in(const char *root, const char *name)
{
    char p[PATH_MAX + 32];
    if (root)
        snprintf(p, sizeof(p), "/%s", name);
    else
        snprintf(p, sizeof(p), "%s/%s", dir, name);
    return hi_open_mapped(root, p);
}

Test(common_open_regular, a_regular_file_opens_blocking)
{
    int fd = open_in(NULL, "lib.so");
    cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
    cr_expect_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
}

Test(common_open_regular, a_fifo_is_refused_at_once)
{
    cr_expect_eq(open_in(NULL, "fifo"), -EINVAL);
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/fifo", dir);
    cr_expect_eq(hi_open_regular(p), -EINVAL);
}

Test(common_open_regular, a_symbolic_link_on_a_maps_path_is_refused)
{
    cr_expect_eq(open_in(NULL, "swapped.so"), -ELOOP);
    cr_expect_eq(open_in(NULL, "linkdir/inner.so"), -ELOOP); /* any component */
    /* hi_open_regular follows links: it is for map_files' magic links. */
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/swapped.so", dir);
    int fd = hi_open_regular(p);
    cr_expect_geq(fd, 0);
    close(fd);
}

Test(common_open_regular, a_root_confines_the_lookup)
{
    int fd = open_in(dir, "sub/inner.so"); /* /sub/inner.so under dir */
    cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
    close(fd);
    cr_expect_eq(open_in(dir, "swapped.so"), -ELOOP);
    /* ".." cannot climb out of the root: /../lib.so is dir's own lib.so. */
    fd = open_in(dir, "../lib.so");
    cr_assert_geq(fd, 0);
    close(fd);
    cr_expect_lt(open_in(dir, "../../etc/passwd"), 0);
}
