/* cli_target_slots.c - reading malloc-family GOT slots through /proc
 * (cli/process/slots.h), on this very process: its slots exist, none points
 * into a profiler that is not loaded, and a pid that does not exist says so. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/process/slots.h"

Test(target_slots, own_slots_read_back_none_hooked)
{
    struct cli_slots_report r;
    void *keep = malloc(16); /* the test binary has a malloc slot of its own */
    cr_assert_eq(cli_slots_check(getpid(), &r), 0);
    cr_expect_gt(r.slots, 0u, "no malloc-family slot found");
    cr_expect_gt(r.modules, 0u);
    cr_expect_eq(r.hooked, 0u);
    cr_expect_eq(r.which[0], '\0');
    cr_expect(!r.payload_mapped);
    cr_expect_eq(r.tid, getpid());
    cr_expect_eq(cli_slots_payload_mapped(getpid()), 0);
    free(keep);
}

Test(target_slots, missing_process)
{
    struct cli_slots_report r;
    /* pid_max is at most 2^22: this pid never exists. */
    cr_expect_eq(cli_slots_check(1 << 23, &r), -ESRCH);
    cr_expect_eq(cli_slots_payload_mapped(1 << 23), -ESRCH);
}
