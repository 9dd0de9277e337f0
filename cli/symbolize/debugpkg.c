/* debugpkg.c - a -dbg package in the main archive, asked of apt-cache. */
#include "cli/symbolize/debugpkg.h"
#include "cli/symbolize/aptlists.h"

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

#define CACHED 64
#define BATCH 32 /* packages asked in one apt-cache call */

/* Which of names (n of them) apt has as real packages, in seen[]:
 * one `apt-cache show --no-all-versions NAME...` prints a record
 * ("Package: NAME", ...) for each real one; a purely virtual name
 * (libstdc++6-dbg, which only points at libstdc++6-12-dbg) and an unknown
 * one print none. apt-cache takes seconds without a binary cache (2.3 s
 * measured here, 3.5 s at load 10), whatever the number of names: one
 * call for all the packages of a report (one per package made
 * cli_postgres's report take 9.4 s), killed after 30 s (with 10 s,
 * cli_debughint_dbg got the fallback hint once at load 20 on 2 cores). */
static void apt_known(char names[][160], size_t n, bool *seen)
{
    const char *asked[2 * BATCH];
    for (size_t i = 0; i < n && i < 2 * BATCH; i++)
        asked[i] = names[i];
    if (cli_aptlists_known(NULL, NULL, asked, n < 2 * BATCH ? n : 2 * BATCH, seen) == 0)
        return; /* apt's own lists answered: no apt-cache (seconds of CPU) */
    char *argv[3 + 2 * BATCH + 1] = { "apt-cache", "show", "--no-all-versions" };
    size_t argc = 3;
    for (size_t i = 0; i < n && i < 2 * BATCH; i++)
        argv[argc++] = names[i];
    argv[argc] = NULL;
    for (size_t i = 0; i < n; i++)
        seen[i] = false;
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawnp(&pid, "apt-cache", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return;
    }
    char line[512];
    size_t ll = 0;
    for (int waited_ms = 0;;) {
        struct pollfd pfd = { fds[0], POLLIN, 0 };
        int pr = poll(&pfd, 1, 100);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0 && (waited_ms += 100) < 30000)
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
            for (size_t i = 0; i < n && i < 2 * BATCH; i++)
                if (!strncmp(line, "Package: ", 9) && !strcmp(line + 9, names[i]))
                    seen[i] = true;
        }
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

static struct {
    char package[128], answer[160]; /* answer "": none */
} cache[CACHED];
static unsigned ncached;

static int cached(const char *package)
{
    for (unsigned i = 0; i < ncached; i++)
        if (!strcmp(cache[i].package, package))
            return (int)i;
    return -1;
}

/* A package name apt-cache may be given (no glob, no path, short). */
static bool askable(const char *package)
{
    return strlen(package) < 100 && !strpbrk(package, " /\\*?[");
}

/* "PKG-dbg", and for "X-minimal" also "X-dbg": 1 or 2 candidates. */
static size_t candidates(const char *package, char cand[][160])
{
    size_t pl = strlen(package), n = 0;
    snprintf(cand[n++], 160, "%s-dbg", package);
    if (pl > 8 && !strcmp(package + pl - 8, "-minimal"))
        snprintf(cand[n++], 160, "%.*s-dbg", (int)(pl - 8), package);
    return n;
}

void cli_debugpkg_prefetch(const char *const *packages, size_t n)
{
    char cand[2 * BATCH][160];
    const char *of[2 * BATCH]; /* the package each candidate is for */
    bool seen[2 * BATCH];
    const char *batch[BATCH];
    size_t nb = 0, nc = 0;
    for (size_t i = 0; i < n && nb < BATCH && ncached + nb < CACHED; i++) {
        const char *p = packages[i];
        bool dup = false;
        for (size_t j = 0; j < nb && !dup; j++)
            dup = !strcmp(batch[j], p);
        if (!p || dup || !askable(p) || cached(p) >= 0)
            continue;
        batch[nb++] = p;
        size_t k = candidates(p, &cand[nc]);
        for (size_t j = 0; j < k; j++)
            of[nc + j] = p;
        nc += k;
    }
    if (!nb)
        return;
    apt_known(cand, nc, seen);
    for (size_t b = 0; b < nb; b++) {
        const char *found = NULL;
        for (size_t c = 0; c < nc && !found; c++)
            if (of[c] == batch[b] && seen[c])
                found = cand[c];
        snprintf(cache[ncached].package, sizeof(cache[0].package), "%.127s", batch[b]);
        snprintf(cache[ncached].answer, sizeof(cache[0].answer), "%.150s", found ? found : "");
        ncached++;
    }
}

bool cli_debugpkg_main_dbg(const char *package, char *buf, size_t len)
{
    if (!askable(package))
        return false;
    int i = cached(package);
    if (i < 0) {
        cli_debugpkg_prefetch(&package, 1);
        if ((i = cached(package)) < 0)
            return false; /* the cache is full: no more apt-cache calls */
    }
    snprintf(buf, len, "%s", cache[i].answer);
    return cache[i].answer[0] != '\0';
}
