/* cli_paths.c - where the cli looks for the payload and the agent's socket. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/process/paths.h"
#include "cli/process/proc.h"

Test(cli_paths, payload_from_the_environment)
{
    char buf[PATH_MAX], tried[1024];
    char path[] = "/tmp/cli_paths_payload_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    setenv("HEAPINJECT_PAYLOAD", path, 1);
    cr_expect_eq(cli_paths_payload(buf, sizeof(buf), tried, sizeof(tried)), 0);
    cr_expect_str_eq(buf, path);
    unlink(path);
    /* A wrong explicit setting is an error, not a silent fallback. */
    cr_expect_eq(cli_paths_payload(buf, sizeof(buf), tried, sizeof(tried)), -ENOENT);
    cr_expect(strstr(tried, "HEAPINJECT_PAYLOAD") != NULL, "%s", tried);
    unsetenv("HEAPINJECT_PAYLOAD");
}

Test(cli_paths, payload_beside_the_executable_is_looked_for)
{
    char buf[PATH_MAX], tried[4096];
    unsetenv("HEAPINJECT_PAYLOAD");
    /* The test binary has no libheapinject.so beside it (build/unit/). */
    int rc = cli_paths_payload(buf, sizeof(buf), tried, sizeof(tried));
    if (rc == 0)
        cr_expect(strstr(buf, "libheapinject.so") != NULL);
    else
        cr_expect(strstr(tried, "/libheapinject.so") && strstr(tried, "../lib/heapinject/libheapinject.so"),
                  "%s", tried);
}

Test(cli_paths, socket_of_a_process_is_per_user_and_pid)
{
    struct cli_sock_path s, cand[CLI_SOCKET_CANDIDATES];
    char want[128];
    cr_assert_eq(cli_paths_socket_new(getpid(), &s), 0);
    snprintf(want, sizeof(want), "/%d.sock", (int)getpid());
    cr_expect(strstr(s.target, want) != NULL, "%s", s.target);
    snprintf(want, sizeof(want), "/tmp/heapinject-%u/", (unsigned)geteuid());
    char run[128];
    snprintf(run, sizeof(run), "/run/user/%u/heapinject/", (unsigned)geteuid());
    cr_expect(!strncmp(s.target, want, strlen(want)) || !strncmp(s.target, run, strlen(run)), "%s", s.target);
    /* Our own mount namespace: reached by the same path. */
    cr_expect_str_eq(s.local, s.target);
    int n = cli_paths_socket_candidates(getpid(), cand);
    cr_assert(n >= 1 && n <= 2);
    cr_expect_str_eq(cand[0].target, s.target);
    cr_expect_eq(cli_paths_socket_new(0x7ffffff0, &s), -ENOENT);
}

Test(cli_proc, facts_about_this_process)
{
    char buf[256];
    uid_t uid;
    struct cli_proc_mem m;
    cr_expect(cli_proc_alive(getpid()));
    cr_expect(!cli_proc_alive(0x7ffffff0));
    cr_assert_eq(cli_proc_uid(getpid(), &uid), 0);
    cr_expect_eq(uid, geteuid());
    cr_expect_eq(cli_proc_same_mntns(getpid()), 1);
    /* The kernel keeps 15 bytes of the executable's name (TASK_COMM_LEN). */
    cr_expect_str_eq(cli_proc_comm(getpid(), buf, sizeof(buf)), "cli_process_pat");
    cr_expect(cli_proc_cmdline(getpid(), buf, sizeof(buf))[0] != '\0', "empty command line");
    cr_assert_eq(cli_proc_mem(getpid(), &m), 0);
    cr_expect(m.rss > 0);
    if (m.have_pss)
        cr_expect(m.uss > 0 && m.uss <= m.rss);
}

static bool is_payload(const char *path)
{
    return cli_paths_is_payload(path, path ? strlen(path) : 0);
}

Test(cli_paths, payload_names_are_recognized)
{
    cr_expect(is_payload("/usr/lib/heapinject/libheapinject.so"));
    cr_expect(is_payload("libheapinject.so"));
    cr_expect(is_payload("/memfd:libheapinject.so (deleted)"));
    cr_expect(is_payload("/opt/hi/libheapinject.so (deleted)"));
    cr_expect(!is_payload("/usr/lib/libheapinject.so.bak"));
    cr_expect(!is_payload("/usr/lib/libfoo.so"));
    cr_expect(!is_payload("/usr/lib/notlibheapinject.so"));
    cr_expect(!is_payload(NULL));
    /* a maps path is not NUL-terminated where it ends */
    cr_expect(cli_paths_is_payload("/x/libheapinject.so/more", strlen("/x/libheapinject.so")));
}
