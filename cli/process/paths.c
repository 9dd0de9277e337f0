/* paths.c - payload and control-socket locations.
 *
 * The socket path is chosen as the TARGET sees it (its mount namespace, its
 * user), because the agent creates it from inside the target. The cli then
 * reaches the same file through /proc/PID/root when the target lives in
 * another mount namespace (a container). Later invocations (status,
 * snapshot, detach) recompute the same candidates, so no state is kept
 * anywhere else. */
#include "cli/process/paths.h"
#include "common/last_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/process/proc.h"

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cli_paths_is_payload(const char *path, size_t len)
{
    static const char own[] = "libheapinject.so";
    const size_t ol = sizeof(own) - 1;
    if (!path)
        return false;
    size_t base = len;
    while (base > 0 && path[base - 1] != '/')
        base--;
    const char *b = path + base;
    size_t blen = len - base;
    if (blen >= 6 && !memcmp(b, "memfd:", 6)) {
        b += 6;
        blen -= 6;
    }
    return blen >= ol && !memcmp(b, own, ol) && (blen == ol || b[ol] == ' ');
}

int cli_paths_payload(char *buf, size_t len, char *tried, size_t triedlen)
{
    char exe[PATH_MAX], dir[PATH_MAX];
    const char *env = getenv("HEAPINJECT_PAYLOAD");
    size_t used = 0;

    if (triedlen)
        tried[0] = '\0';
    if (env && env[0]) {
        if (file_exists(env) && strlen(env) < len) {
            snprintf(buf, len, "%s", env);
            return 0;
        }
        /* An explicit setting that is wrong must not silently fall back. */
        snprintf(tried, triedlen, "%s (from $HEAPINJECT_PAYLOAD)", env);
        return -ENOENT;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -errno;
    exe[n] = '\0';
    snprintf(dir, sizeof(dir), "%s", dirname(exe));

    const char *rel[] = { "libheapinject.so", "../lib/heapinject/libheapinject.so" };
    for (size_t i = 0; i < 2; i++) {
        char cand[PATH_MAX];
        if (snprintf(cand, sizeof(cand), "%s/%s", dir, rel[i]) >= (int)sizeof(cand))
            continue;
        if (file_exists(cand)) {
            /* Resolve "..": the injector hands this path to the target. */
            char real[PATH_MAX];
            const char *use = realpath(cand, real) ? real : cand;
            if (strlen(use) >= len)
                return -ENAMETOOLONG;
            snprintf(buf, len, "%s", use);
            return 0;
        }
        if (used < triedlen) {
            int w = snprintf(tried + used, triedlen - used, "%s%s", used ? ", " : "", cand);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    return -ENOENT;
}

/* Fills out->local from out->target. */
static int make_local(pid_t pid, struct cli_sock_path *out)
{
    int same = cli_proc_same_mntns(pid);
    int n;
    /* Unknown (no permission to compare namespaces): the plain path is the
     * only one such a user could use anyway. */
    if (same != 0)
        n = snprintf(out->local, sizeof(out->local), "%s", out->target);
    else
        n = snprintf(out->local, sizeof(out->local), "/proc/%d/root%s", (int)pid, out->target);
    return n >= (int)sizeof(out->local) ? -ENAMETOOLONG : 0;
}

/* The target's /run/user/<uid> exists and belongs to that user. */
static int has_runtime_dir(pid_t pid, uid_t uid)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/root/run/user/%u", (int)pid, (unsigned)uid);
    if (stat(path, &st) < 0) {
        if (errno != EACCES && errno != EPERM)
            return 0;
        /* /proc/PID/root not ours to follow: look in our own root if the
         * target shares it. */
        if (cli_proc_same_mntns(pid) == 0)
            return 0;
        snprintf(path, sizeof(path), "/run/user/%u", (unsigned)uid);
        if (stat(path, &st) < 0)
            return 0;
    }
    return S_ISDIR(st.st_mode) && st.st_uid == uid;
}

static int fill(pid_t pid, uid_t uid, int runtime, struct cli_sock_path *out)
{
    int n;
    memset(out, 0, sizeof(*out));
    if (runtime)
        n = snprintf(out->target, sizeof(out->target), "/run/user/%u/heapinject/%d.sock",
                     (unsigned)uid, (int)pid);
    else
        n = snprintf(out->target, sizeof(out->target), "/tmp/heapinject-%u/%d.sock",
                     (unsigned)uid, (int)pid);
    if (n >= (int)sizeof(out->target))
        return -ENAMETOOLONG;
    return make_local(pid, out);
}

int cli_paths_socket_new(pid_t pid, struct cli_sock_path *out)
{
    uid_t uid;
    int rc = cli_proc_uid(pid, &uid);
    if (rc < 0)
        return rc;
    return fill(pid, uid, has_runtime_dir(pid, uid), out);
}

static int same_ns(pid_t pid, const char *ns)
{
    char a[64], b[64], p[64];
    snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)pid, ns);
    ssize_t n = readlink(p, a, sizeof(a) - 1);
    snprintf(p, sizeof(p), "/proc/self/ns/%s", ns);
    ssize_t m = readlink(p, b, sizeof(b) - 1);
    return n > 0 && n == m && !memcmp(a, b, (size_t)n);
}

int cli_paths_last_whole(const char *path, const struct stat *st)
{
    struct hi_last_header h;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    int whole = read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && hi_last_header_whole(&h, (uint64_t)st->st_size);
    close(fd);
    return whole;
}

int cli_paths_clean_stale(pid_t target, const struct cli_sock_path *sock)
{
    if (!same_ns(target, "pid") || !same_ns(target, "mnt"))
        return 0;
    char dir[sizeof(sock->local)];
    snprintf(dir, sizeof(dir), "%s", sock->local);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    struct stat ds;
    if (lstat(dir, &ds) < 0 || !S_ISDIR(ds.st_mode))
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || pid <= 0 || pid == (long)target)
            continue;
        int is_last = strcmp(end, HI_LAST_SUFFIX) == 0, is_tmp = strcmp(end, HI_LAST_SUFFIX ".tmp") == 0;
        if (!is_last && !is_tmp && strcmp(end, ".sock"))
            continue;
        int gone = kill((pid_t)pid, 0) < 0 && errno == ESRCH;
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        int n = snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (n >= (int)sizeof(a.sun_path) || lstat(a.sun_path, &st) < 0 || st.st_uid != ds.st_uid)
            continue;
        if (is_last || is_tmp) {
            /* A last snapshot nobody read for a day, of a process gone, or
             * half of one (it died while its profiler wrote it, or kept
             * it open from its start and ended without one). A whole
             * PID.last.tmp is a last snapshot its writer could not rename
             * (payload/serve/last_keep.h): kept as PID.last is. */
            if (gone && S_ISREG(st.st_mode) &&
                ((is_tmp && !cli_paths_last_whole(a.sun_path, &st)) || time(NULL) - st.st_mtime > HI_LAST_KEEP_S) &&
                unlink(a.sun_path) == 0)
                removed++;
            continue;
        }
        /* A process that exists (or may) is not ours to judge here: an
         * exec'd one's socket goes when a command asks for that pid
         * (cli_left_socket_remove). */
        if (!S_ISSOCK(st.st_mode) || !gone)
            continue;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int refused = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == ECONNREFUSED;
        close(fd);
        if (refused && unlink(a.sun_path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

/* The places of uid's sockets for pid, appended at out[n]: its runtime
 * directory's and /tmp's (the runtime directory may have appeared after
 * the agent started: a login of that user). Returns the new count. */
static int add_places(pid_t pid, uid_t uid, struct cli_sock_path *out, int n)
{
    int runtime = has_runtime_dir(pid, uid);
    if (runtime && fill(pid, uid, 1, &out[n]) == 0)
        n++;
    if (fill(pid, uid, 0, &out[n]) == 0)
        n++;
    return n;
}

int cli_paths_socket_candidates(pid_t pid, struct cli_sock_path out[CLI_SOCKET_CANDIDATES])
{
    uid_t uid;
    int rc = cli_proc_uid(pid, &uid);
    if (rc < 0)
        return rc;
    /* The first is the one cli_paths_socket_new() chooses: its error is
     * the one to say. */
    if ((rc = fill(pid, uid, has_runtime_dir(pid, uid), &out[0])) < 0)
        return rc;
    int n = add_places(pid, uid, out, 0);
    if (geteuid() != uid)
        n = add_places(pid, geteuid(), out, n);
    return n;
}

const char *cli_paths_basename(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}
