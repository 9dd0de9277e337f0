/* debughint.c - the package or file that would give a module debug
 * information (debughint.h). */
#include "cli/symbolize/debughint.h"
#include "cli/symbolize/debugpkg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* dpkg-query -S takes a glob: a path holding one would match others. */
static bool plain_path(const char *p)
{
    return p[0] == '/' && !strpbrk(p, "*?[]\\\n") && strlen(p) < 1024;
}

/* Debian's archive installs programs and libraries under /usr (never
 * /usr/local), /lib*, /bin and /sbin only (policy 9.1). A path elsewhere
 * (pyenv's /root/.pyenv, /opt, /home, a build tree) has no -dbgsym or -dbg
 * package to name, and asking dpkg about it costs as much as any other
 * question: dpkg-query reads every installed package's file list whatever
 * it is asked (0.3-0.65 s a call measured here at load 8). Not asked. */
static bool package_path(const char *p)
{
    static const char *const dirs[] = { "/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/" };
    if (!strncmp(p, "/usr/local/", 11))
        return false;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (!strncmp(p, dirs[i], strlen(dirs[i])))
            return true;
    return false;
}

#define OWNERS_BATCH 64 /* paths in one dpkg-query call (2 names each) */

/* One line of dpkg-query -S: "pkg[:arch][, pkg2...]: path". For the
 * query that names that path, the first package (without architecture)
 * into owner[] of the path it stands for; a direct answer wins over one
 * for the path without /usr. Diversion lines are not owners. */
static void owner_line(const char *line, const char *const *query, const size_t *of, const bool *direct,
                       size_t nq, char **owner, bool *owner_direct)
{
    if (!strncmp(line, "diversion ", 10) || !strncmp(line, "local diversion", 15))
        return;
    const char *sep = strstr(line, ": /");
    size_t plen = strcspn(line, ":, ");
    if (!sep || !plen)
        return;
    for (size_t q = 0; q < nq; q++) {
        size_t p = of[q];
        if (strcmp(sep + 2, query[q]) || (owner[p] && (owner_direct[p] || !direct[q])))
            continue;
        char *pkg = strndup(line, plen);
        if (!pkg)
            return;
        free(owner[p]);
        owner[p] = pkg;
        owner_direct[p] = direct[q];
    }
}

/* The packages owning paths[0..n) (n <= OWNERS_BATCH) into owner[] (NULL:
 * none or not asked), from one dpkg-query -S call for all of them, each
 * asked as is and, under /usr, without it (merged /usr: dpkg lists libc
 * under /lib). Runs dpkg-query without a shell: paths come from the
 * target. */
static void dpkg_owners(const char *const *paths, size_t n, char **owner)
{
    const char *query[2 * OWNERS_BATCH];
    size_t of[2 * OWNERS_BATCH], nq = 0;
    bool direct[2 * OWNERS_BATCH], owner_direct[OWNERS_BATCH] = { false };
    char *argv[2 + 2 * OWNERS_BATCH + 1] = { "dpkg-query", "-S" };

    for (size_t i = 0; i < n; i++) {
        owner[i] = NULL;
        if (!paths[i] || !plain_path(paths[i]) || !package_path(paths[i]))
            continue;
        of[nq] = i, direct[nq] = true, query[nq++] = paths[i];
        if (!strncmp(paths[i], "/usr/", 5))
            of[nq] = i, direct[nq] = false, query[nq++] = paths[i] + 4;
    }
    if (!nq)
        return;
    for (size_t q = 0; q < nq; q++)
        argv[2 + q] = (char *)query[q];
    argv[2 + nq] = NULL;

    int fds[2];
    pid_t pid;
    posix_spawn_file_actions_t fa;
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
    int rc = posix_spawnp(&pid, "dpkg-query", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return;
    }
    /* dpkg-query answers in tenths of a second; a hung one (a locked or
     * broken database) must not hold the report: 3 s, then it is killed
     * and the lines it printed are kept. It exits 1 when any of the paths
     * has no owner: its status says nothing of the others. */
    char line[2048];
    size_t ll = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd pfd = { fds[0], POLLIN, 0 };
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = 3000 - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        int pr = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (pr < 0 && errno == EINTR)
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
        for (ssize_t k = 0; k < r; k++) {
            if (buf[k] != '\n') {
                if (ll < sizeof(line) - 1)
                    line[ll++] = buf[k];
                continue;
            }
            line[ll] = '\0';
            ll = 0;
            owner_line(line, query, of, direct, nq, owner, owner_direct);
        }
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

char *cli_debughint_package(const char *path)
{
    char *pkg;
    dpkg_owners(&path, 1, &pkg);
    return pkg;
}

/* Answers already had, by path: a text and a JSON report of one profile
 * print the same hints. Kept until the cli exits. */
struct asked {
    char *path, *package;
    struct asked *next;
};
static struct asked *asked;

static struct asked *asked_of(const char *path)
{
    for (struct asked *a = asked; a; a = a->next)
        if (!strcmp(a->path, path))
            return a;
    return NULL;
}

/* Remembers package (taken) as path's answer. */
static struct asked *remember(const char *path, char *package)
{
    struct asked *a = calloc(1, sizeof(*a));
    if (!a || !(a->path = strdup(path))) {
        free(a);
        free(package);
        return NULL;
    }
    a->package = package;
    a->next = asked;
    asked = a;
    return a;
}

const char *cli_debughint_package_of(const struct cli_debug_hint *h)
{
    if (h->package || !h->ask_path)
        return h->package;
    struct asked *a = asked_of(h->ask_path);
    if (!a)
        a = remember(h->ask_path, cli_debughint_package(h->ask_path));
    return a ? a->package : NULL;
}

void cli_debughint_prefetch(const struct cli_debug_hint *hints, size_t n)
{
    /* The paths not asked yet, OWNERS_BATCH to a dpkg-query call (one for
     * a report's usual few modules), instead of a call per module. */
    for (size_t i = 0; i < n;) {
        const char *paths[OWNERS_BATCH];
        char *owner[OWNERS_BATCH];
        size_t k = 0;
        for (; i < n && k < OWNERS_BATCH; i++) {
            const char *p = hints[i].package ? NULL : hints[i].ask_path;
            bool dup = false;
            for (size_t j = 0; j < k && p && !dup; j++)
                dup = !strcmp(paths[j], p);
            if (p && !dup && !asked_of(p))
                paths[k++] = p;
        }
        dpkg_owners(paths, k, owner);
        for (size_t j = 0; j < k; j++)
            remember(paths[j], owner[j]);
    }
    const char *packages[32];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 32; i++) {
        const char *p = cli_debughint_package_of(&hints[i]);
        if (p && strcmp(p, "libc6")) /* libc6-dbg is known without asking */
            packages[k++] = p;
    }
    cli_debugpkg_prefetch(packages, k);
}

const char *cli_debughint_debug_package(const char *package, char *buf, size_t len)
{
    /* glibc ships its debug information as libc6-dbg in the main archive;
     * other packages have automatic -dbgsym packages in debian-debug. */
    if (!strcmp(package, "libc6"))
        snprintf(buf, len, "libc6-dbg");
    else if (!cli_debugpkg_main_dbg(package, buf, len)) /* a -dbg in the main archive first */
        snprintf(buf, len, "%s-dbgsym", package);
    return buf;
}

/* Does any of apt's source files name a line containing word? Both the
 * one-line (.list) and the deb822 (.sources) formats name the archive's
 * URL on one line. Disabled files (other suffixes) do not count. */
static bool apt_sources_mention(const char *dir_or_file, const char *word)
{
    bool found = false;
    DIR *d = opendir(dir_or_file);
    if (!d) {
        FILE *f = fopen(dir_or_file, "re");
        char line[1024];
        while (f && !found && fgets(line, sizeof(line), f))
            found = line[strspn(line, " \t")] != '#' && strstr(line, word);
        if (f)
            fclose(f);
        return found;
    }
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        bool list = n > 5 && !strcmp(e->d_name + n - 5, ".list");
        bool sources = n > 8 && !strcmp(e->d_name + n - 8, ".sources");
        char path[512];
        if ((list || sources) && snprintf(path, sizeof(path), "%s/%s", dir_or_file, e->d_name) < (int)sizeof(path))
            found = apt_sources_mention(path, word);
    }
    closedir(d);
    return found;
}

int cli_debughint_debug_archive(const char *apt_dir)
{
    char p[256];
    if (!apt_dir)
        apt_dir = "/etc/apt";
    snprintf(p, sizeof(p), "%s/sources.list", apt_dir);
    struct stat st;
    if (stat(apt_dir, &st) < 0)
        return -1; /* not a Debian-like system: nothing to say */
    bool found = apt_sources_mention(p, "debian-debug");
    snprintf(p, sizeof(p), "%s/sources.list.d", apt_dir);
    return found || apt_sources_mention(p, "debian-debug");
}

/* The release's code name for the archive line ("bookworm"), or NULL. */
static const char *codename(char *buf, size_t len)
{
    FILE *f = fopen("/etc/os-release", "re");
    char line[256];
    const char *found = NULL;
    while (f && !found && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VERSION_CODENAME=", 17) && line[17] > ' ') {
            snprintf(buf, len, "%.*s", (int)strcspn(line + 17, "\"\n"), line + 17);
            found = buf;
        }
    if (f)
        fclose(f);
    return found;
}

const char *cli_debughint_debug_file(const char *build_id, char *buf, size_t len)
{
    if (!build_id || strlen(build_id) < 3)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
    return buf;
}

const char *cli_debughint_line(const struct cli_debug_hint *h, char *buf, size_t len)
{
    char pkg[256], file[512];
    int n = 0;
    const char *package = cli_debughint_package_of(h);
    /* -dbgsym packages live only in Debian's debug archive, which apt
     * does not list unless told: say so rather than name a package that
     * apt-get would not find (cached: one look per process). */
    static int archive = -2;
    if (package && archive == -2)
        archive = cli_debughint_debug_archive(NULL);
    char code[64];
    const char *cn = package ? codename(code, sizeof(code)) : NULL;
    /* only a -dbgsym package needs the debug archive */
    if (package && strstr(cli_debughint_debug_package(package, pkg, sizeof(pkg)), "-dbgsym") && archive == 0 && cn)
        n = snprintf(buf, len, "install %s (debug symbols of package %s) after adding Debian's debug archive "
                     "to apt (deb http://deb.debian.org/debian-debug %s-debug main; apt's sources here do "
                     "not have it), or ",
                     cli_debughint_debug_package(package, pkg, sizeof(pkg)), package, cn);
    else if (package)
        n = snprintf(buf, len, "install %s (debug symbols of package %s), or ",
                     cli_debughint_debug_package(package, pkg, sizeof(pkg)), package);
    if (n >= 0 && (size_t)n < len && h->build_id)
        n += snprintf(buf + n, len - (size_t)n, "put its debug file at %s, or ",
                      cli_debughint_debug_file(h->build_id, file, sizeof(file)));
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (n >= 0 && (size_t)n >= len)
        return buf;
    if (urls && urls[0]) /* libdw asked them already */
        snprintf(buf + n, len - (size_t)n, "add a debuginfod server that has it to DEBUGINFOD_URLS (%s did not)",
                 urls);
    else
        snprintf(buf + n, len - (size_t)n, "set DEBUGINFOD_URLS to a debuginfod server%s",
                 package ? " (https://debuginfod.debian.net)" : "");
    return buf;
}
