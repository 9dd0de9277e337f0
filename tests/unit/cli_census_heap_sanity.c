/* cli_census_heap_sanity.c - the heap check before attach, on real
 * processes (build/targets/heap_race): a latent corrupt tcache link is
 * found and named, and a heap whose lists change while they are read is
 * never called corrupt, not even by one look (CI once refused a healthy
 * churning process: a tcache head read, then taken and written by the
 * program before its link was read). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/census/heap_sanity.h"

static pid_t child = -1;

static void stop_child(void)
{
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        child = -1;
    }
}

/* Starts build/targets/heap_race MODE and waits for its "ready". */
static pid_t start_race(const char *mode)
{
    const char *dir = getenv("TARGETS") ? getenv("TARGETS") : "build/targets";
    char path[512], line[16] = "";
    int fds[2];
    snprintf(path, sizeof(path), "%s/heap_race", dir);
    cr_assert_eq(access(path, X_OK), 0, "%s is not built (make targets)", path);
    cr_assert_eq(pipe(fds), 0);
    child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(path, "heap_race", mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* to the end of the line: a write to a pipe nobody reads kills it */
    for (size_t n = 0; n < sizeof(line) - 1 && !strchr(line, '\n');) {
        ssize_t got = read(fds[0], line + n, sizeof(line) - 1 - n);
        cr_assert_gt(got, 0, "heap_race %s did not start", mode);
        n += (size_t)got;
    }
    close(fds[0]);
    cr_assert(strstr(line, "ready"), "heap_race %s said %s", mode, line);
    return child;
}

TestSuite(cli_census_heap_sanity, .fini = stop_child);

Test(cli_census_heap_sanity, latent_tcache_link_is_named)
{
    pid_t pid = start_race("tcache-bad");
    char why[400] = "";
    int rc = cli_heap_sanity_check(pid, why, sizeof(why));
    if (rc < 0)
        cr_skip_test("the heap cannot be read here: %s", why);
    cr_assert_eq(rc, 0, "the corrupt link was not found (rc %d)", rc);
    cr_assert(strstr(why, "the main thread's tcache of 960-byte chunks: a link to 0x") &&
                  strstr(why, "after 1 entries, not 16-byte aligned"),
              "why: %s", why);
    cr_assert_eq(kill(pid, 0), 0, "the process did not live on");
}

Test(cli_census_heap_sanity, lists_changing_under_one_look_are_not_corrupt, .timeout = 120)
{
    pid_t pid = start_race("churn");
    char why[400] = "";
    int looks = 0, corrupt = 0, unreadable = 0;
    for (; looks < 400; looks++) {
        int rc = cli_heap_sanity_look(pid, why, sizeof(why));
        if (rc < 0 && ++unreadable > 5)
            cr_skip_test("the heap cannot be read here: %s", why);
        if (rc == 0 && corrupt++ == 0)
            cr_log_error("look %d: %s", looks, why);
    }
    cr_assert_eq(corrupt, 0, "%d of %d looks called a healthy heap corrupt", corrupt, looks);
    cr_assert_eq(kill(pid, 0), 0);
}
