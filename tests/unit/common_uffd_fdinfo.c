/* common_uffd_fdinfo.c - a userfaultfd's features read from fdinfo text
 * as the kernel writes it (common/uffd_fdinfo.h). */
#include <criterion/criterion.h>
#include <linux/userfaultfd.h>

#include "common/uffd_fdinfo.h"

Test(uffd_fdinfo, features_of_the_api_line)
{
    /* As 6.18 writes it for UFFDIO_API with UFFD_FEATURE_EVENT_FORK. */
    const char *fork = "pos:\t0\nflags:\t02004000\nmnt_id:\t17\nino:\t161395\npending:\t0\ntotal:\t0\n"
                       "API:\taa:80000002:80000000000001ff\n";
    int64_t f = hi_uffd_features(fork);
    cr_assert_eq(f, 0x80000002);
    cr_expect(f & UFFD_FEATURE_EVENT_FORK);
    cr_expect_not(hi_uffd_features("pending:\t0\ntotal:\t0\nAPI:\taa:80000000:1ff\n") & UFFD_FEATURE_EVENT_FORK);
    cr_expect_eq(hi_uffd_features("pos:\t0\nflags:\t02\n"), -1);
    cr_expect_eq(hi_uffd_features("API:\taa:"), -1);
    cr_expect(hi_uffd_is_link("anon_inode:[userfaultfd]"));
    cr_expect_not(hi_uffd_is_link("anon_inode:[eventpoll]"));
}
