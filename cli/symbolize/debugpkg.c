/* debugpkg.c - a -dbg package in the main archive, asked of apt-cache. */
#include "cli/symbolize/debugpkg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CACHED 16

/* Of names (n of them), the first that apt has as a real package, or -1:
 * one `apt-cache show --no-all-versions NAME...` prints a record
 * ("Package: NAME", ...) for each real one; a purely virtual name
 * (libstdc++6-dbg, which only points at libstdc++6-12-dbg) and an unknown
 * one print none. apt-cache takes seconds on a loaded machine without a
 * binary cache (2.3 s measured): one call for all names, killed after
 * 10 s. */
static int apt_first_known(char names[][160], size_t n)
{
    char *argv[8] = { "apt-cache", "show", "--no-all-versions" };
    for (size_t i = 0; i < n && i < 4; i++)
        argv[3 + i] = names[i];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawnp(&pid, "apt-cache", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    bool seen[4] = { false };
    char line[512];
    size_t ll = 0;
    for (int waited_ms = 0;;) {
        struct pollfd pfd = { fds[0], POLLIN, 0 };
        int pr = poll(&pfd, 1, 100);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0 && (waited_ms += 100) < 10000)
            continue;
        if (pr <= 0) {
            kill(pid, SIGKILL);
            break;
        }
        char buf[4096];
        ssize_t r = read(fds[0], buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t k = 0; k < r; k++) { /* lines "Package: NAME" */
            if (buf[k] != '\n') {
                if (ll < sizeof(line) - 1)
                    line[ll++] = buf[k];
                continue;
            }
            line[ll] = '\0';
            ll = 0;
            for (size_t i = 0; i < n && i < 4; i++)
                if (!strncmp(line, "Package: ", 9) && !strcmp(line + 9, names[i]))
                    seen[i] = true;
        }
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    for (size_t i = 0; i < n && i < 4; i++)
        if (seen[i])
            return (int)i;
    return -1;
}

bool cli_debugpkg_main_dbg(const char *package, char *buf, size_t len)
{
    static struct {
        char package[128], answer[160]; /* answer "": none */
    } cache[CACHED];
    static unsigned ncached;
    for (unsigned i = 0; i < ncached; i++)
        if (!strcmp(cache[i].package, package)) {
            snprintf(buf, len, "%s", cache[i].answer);
            return cache[i].answer[0] != '\0';
        }
    char cand[2][160];
    size_t pl = strlen(package), n = 0;
    if (pl >= 100 || strpbrk(package, " /\\*?"))
        return false;
    snprintf(cand[n++], sizeof(cand[0]), "%s-dbg", package);
    if (pl > 8 && !strcmp(package + pl - 8, "-minimal"))
        snprintf(cand[n++], sizeof(cand[0]), "%.*s-dbg", (int)(pl - 8), package);
    int k = apt_first_known(cand, n);
    const char *found = k >= 0 ? cand[k] : NULL;
    if (ncached < CACHED) {
        snprintf(cache[ncached].package, sizeof(cache[0].package), "%.127s", package);
        snprintf(cache[ncached].answer, sizeof(cache[0].answer), "%.150s", found ? found : "");
        ncached++;
    }
    if (found)
        snprintf(buf, len, "%s", found);
    return found != NULL;
}
