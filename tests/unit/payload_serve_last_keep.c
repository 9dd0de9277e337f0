/* payload_serve_last_keep.c - PID.last.tmp kept open from a followed
 * root child's start (payload/serve/last_keep.h): the number is used only
 * while it still names the file made, a fork child closes the parent's
 * without removing it, and a drop removes only this process's own. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "payload/serve/last_keep.h"

static char dir[] = "/tmp/hi-last-keep-XXXXXX";
static char path[256];

static void setup(void)
{
    if (geteuid() != 0)
        cr_skip_test("kept only by a process running as root");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/123.last.tmp", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

TestSuite(last_keep, .init = setup, .fini = teardown);

Test(last_keep, the_file_is_made_at_once_and_taken_whole)
{
    pl_last_keep_open(path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "made at the start");
    cr_expect_eq(st.st_mode & 0777, 0600);
    cr_expect(pl_last_keep_held());
    int fd = pl_last_keep_take();
    cr_assert_geq(fd, 0);
    cr_expect_eq(write(fd, "x", 1), 1, "written through the kept descriptor");
    close(fd);
    cr_expect_eq(pl_last_keep_take(), -1, "taken once");
}

Test(last_keep, a_number_the_program_reused_is_never_touched)
{
    pl_last_keep_open(path);
    /* The program closes every descriptor it did not open, then opens a
     * file of its own, which gets the same number. */
    int kept = -1;
    for (int fd = 3; fd < 64; fd++) {
        char link[64], to[256];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, to, sizeof(to) - 1);
        if (n > 0 && (to[n] = '\0', strcmp(to, path) == 0))
            kept = fd;
    }
    cr_assert_geq(kept, 0, "the kept descriptor is open");
    close(kept);
    int mine = open("/dev/null", O_RDONLY);
    cr_assert_eq(mine, kept, "the program's file took the number");
    cr_expect_eq(pl_last_keep_take(), -1, "not the file made: not taken");
    pl_last_keep_drop(path);
    cr_expect_eq(fcntl(mine, F_GETFD), 0, "the program's descriptor is still open after the drop");
    close(mine);
}

Test(last_keep, a_fork_child_closes_the_parents_and_leaves_its_file)
{
    pl_last_keep_open(path);
    pid_t pid = fork();
    if (pid == 0) {
        pl_last_keep_atfork_child();
        int ok = !pl_last_keep_held() && pl_last_keep_take() == -1 && access(path, F_OK) == 0;
        pl_last_keep_drop(path); /* not the child's: nothing removed */
        _exit(ok && access(path, F_OK) == 0 ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child let the parent's file be");
    cr_expect_eq(access(path, F_OK), 0, "the parent's file is there");
    cr_expect(pl_last_keep_held(), "and still the parent's");
    pl_last_keep_drop(path);
    cr_expect_neq(access(path, F_OK), 0, "the parent's own drop removes it");
}
