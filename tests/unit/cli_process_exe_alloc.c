/* cli_exe_alloc: which executables carry their own allocator. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli/process/exe_alloc.h"

Test(exe_alloc, names_of_allocator_entry_points)
{
    cr_assert_not_null(cli_exe_alloc_name("malloc"));
    cr_assert_not_null(strstr(cli_exe_alloc_name("_rjem_malloc"), "tikv-jemallocator"));
    cr_assert_not_null(strstr(cli_exe_alloc_name("mi_malloc"), "mimalloc"));
    cr_assert_null(cli_exe_alloc_name("xmalloc"));
    cr_assert_null(cli_exe_alloc_name("malloc_usable_size"));
    cr_assert_null(cli_exe_alloc_name(""));
}

/* This test program calls glibc's (or ASan's shared) malloc: nothing of
 * its own. */
Test(exe_alloc, a_program_using_libc_malloc_is_not_refused)
{
    struct cli_exe_alloc a;
    int fd = open("/proc/self/exe", O_RDONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(cli_exe_alloc_scan(fd, &a), 0);
    close(fd);
}

Test(exe_alloc, a_file_that_is_not_elf_is_an_error)
{
    struct cli_exe_alloc a;
    int fd = open("/proc/self/status", O_RDONLY);
    cr_assert_geq(fd, 0);
    cr_assert_lt(cli_exe_alloc_scan(fd, &a), 0);
    close(fd);
}
