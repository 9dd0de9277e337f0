/* payload_serve_last_snapshot.c - the last snapshot's file (payload/serve/
 * last_snapshot.h): a followed child's start time taken from the fork's
 * clock is /proc's, and the directory's bound on last snapshots keeps the
 * newest and touches nothing else. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/last_snapshot.h"
#include "payload/serve/last_snapshot.h"

static uint32_t no_samples(void)
{
    return 0;
}

static void no_unlink(void)
{
}

/* Field 22 of /proc/self/stat. */
static unsigned long long proc_start_ticks(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long long v = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ')
            field++;
    if (p)
        v = strtoull(p, NULL, 10);
    return v;
}

/* Exit codes of a child: 0 its start time known and /proc's, 2 not known
 * (the fork crossed a clock tick: read from /proc at the end), 1 wrong. */
Test(last_snapshot, a_childs_start_time_from_the_forks_clock_is_procs)
{
    enum { FORKS = 300 };
    int known = 0, unknown = 0, wrong = 0;
    for (int i = 0; i < FORKS; i++) {
        pl_last_fork_prepare();
        pid_t c = fork();
        cr_assert_geq(c, 0);
        if (c == 0) {
            pl_last_child_session(no_samples, no_unlink, NULL);
            unsigned long long mine = pl_last_child_start_ticks(), proc = proc_start_ticks();
            _exit(mine == 0 ? 2 : mine == proc ? 0 : 1);
        }
        int st;
        cr_assert_eq(waitpid(c, &st, 0), c);
        cr_assert(WIFEXITED(st));
        known += WEXITSTATUS(st) == 0;
        unknown += WEXITSTATUS(st) == 2;
        wrong += WEXITSTATUS(st) == 1;
    }
    cr_expect_eq(wrong, 0, "%d of %d children's start times differ from /proc's", wrong, FORKS);
    cr_expect_geq(known, FORKS * 9 / 10, "only %d of %d known without /proc (%d crossed a tick)", known, FORKS,
                  unknown);
}

static char dir[] = "/tmp/hi-last-room-XXXXXX";

static void in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

/* A file NAME whose modification time is second s of 2020. */
static void make_file(const char *name, int s)
{
    char p[256];
    in_dir(p, sizeof(p), name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0, "%s", p);
    struct timespec t[2] = { { 1577836800 + s, 0 }, { 1577836800 + s, 0 } };
    cr_assert_eq(futimens(fd, t), 0);
    close(fd);
}

static int exists(const char *name)
{
    char p[256];
    struct stat st;
    in_dir(p, sizeof(p), name);
    return lstat(p, &st) == 0;
}

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(last_snapshot, below_the_bound_nothing_goes, .init = setup, .fini = teardown)
{
    char name[32];
    for (int i = 0; i < HI_LAST_MAX_FILES - 1; i++) {
        snprintf(name, sizeof(name), "%d.last", 1000 + i);
        make_file(name, i);
    }
    pl_last_make_room_in(dir);
    for (int i = 0; i < HI_LAST_MAX_FILES - 1; i++) {
        snprintf(name, sizeof(name), "%d.last", 1000 + i);
        cr_expect(exists(name), "%s removed below the bound", name);
    }
}

/* 20 files, the pids not in the order of their times: the 12 newest stay;
 * what is no PID.last file stays too. */
Test(last_snapshot, at_the_bound_the_oldest_go, .init = setup, .fini = teardown)
{
    enum { N = 20 };
    char name[32], p[256];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "%d.last", 5000 - i * 7 % 13 * 100 - i);
        make_file(name, i);
    }
    make_file("42.last.tmp", 0);
    make_file("42.sock", 0);
    make_file("x7.last", 0);
    in_dir(p, sizeof(p), "77.last");
    cr_assert_eq(mkdir(p, 0700), 0);
    pl_last_make_room_in(dir);
    int kept = 0;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "%d.last", 5000 - i * 7 % 13 * 100 - i);
        int newest = i >= N - HI_LAST_MAX_FILES * 3 / 4;
        cr_expect_eq(exists(name), newest, "%s (second %d) %s", name, i, newest ? "removed" : "kept");
        kept += exists(name);
    }
    cr_expect_eq(kept, HI_LAST_MAX_FILES * 3 / 4);
    cr_expect(exists("42.last.tmp") && exists("42.sock") && exists("x7.last") && exists("77.last"),
              "only PID.last files are removed");
}
