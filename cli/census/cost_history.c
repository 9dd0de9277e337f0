/* cost_history.c - the last census's copy cost of a process, kept by the
 * cli between censuses (see cost_history.h). */
#include "cli/census/cost_history.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/process/proc.h"


/* The process's start time (/proc/PID/stat field 22, clock ticks since
 * boot): with the pid, it names one process. 0 when unreadable. */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0) /* NUL-terminated */
        return 0;
    /* after the comm's closing parenthesis: state (3) ... starttime (22) */
    const char *p = strrchr(buf, ')');
    unsigned long long t = 0;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     &t) != 1)
        return 0;
    return t;
}

/* The cli's own directory for it: $XDG_RUNTIME_DIR/heapinject-census,
 * else /tmp/heapinject-census-<euid>; made 0700, and used only when it is
 * a directory of ours (not a link another user put there). The agent's
 * socket directory is not used: the agent removes it when it leaves. */
static int history_dir(char *out, size_t len)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    int n = run && run[0] == '/' ? snprintf(out, len, "%s/heapinject-census", run)
                                 : snprintf(out, len, "/tmp/heapinject-census-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    if (mkdir(out, 0700) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(out, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return -EPERM;
    return 0;
}

/* "<history_dir>/<pid>.cost". */
static int history_path(pid_t pid, char *out, size_t len)
{
    char dir[400];
    int rc = history_dir(dir, sizeof(dir));
    if (rc < 0)
        return rc;
    if ((size_t)snprintf(out, len, "%s/%d.cost", dir, (int)pid) >= len)
        return -ENAMETOOLONG;
    return 0;
}

/* Forgets the processes that are gone (their files would only pile up). */
static void forget_gone(void)
{
    char dir[400], path[512];
    if (history_dir(dir, sizeof(dir)) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || strcmp(end, ".cost") || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
            unlink(path);
    }
    closedir(d);
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_census_history_load(pid_t pid, struct cli_census_history *h)
{
    char path[512], buf[256];
    memset(h, 0, sizeof(*h));
    unsigned long long st = start_time(pid);
    if (!st || history_path(pid, path, sizeof(path)) < 0)
        return -ENOENT;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -ENOENT;
    buf[n] = '\0';
    unsigned long long their_st, copied, uss;
    double window_ms, at;
    if (sscanf(buf, "%llu %llu %lf %llu %lf", &their_st, &copied, &window_ms, &uss, &at) != 5 || their_st != st ||
        window_ms <= 0 || !uss)
        return -ENOENT; /* another process's (the pid was reused), or not ours */
    h->copied = copied;
    h->window_ms = window_ms;
    h->uss = uss;
    h->age_s = wall_s() - at;
    return 0;
}

int cli_census_history_save(pid_t pid, uint64_t copied, double window_ms, uint64_t uss)
{
    char path[512], tmp[528], line[256];
    unsigned long long st = start_time(pid);
    if (!st || !uss || history_path(pid, path, sizeof(path)) < 0)
        return -ENOENT;
    forget_gone();
    /* written aside, then renamed over: a reader sees a whole line */
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    int len = snprintf(line, sizeof(line), "%llu %" PRIu64 " %.3f %" PRIu64 " %.3f\n", st, copied, window_ms, uss,
                       wall_s());
    bool ok = write(fd, line, (size_t)len) == len;
    close(fd);
    if (!ok || rename(tmp, path) < 0) {
        int err = errno ? errno : EIO;
        unlink(tmp);
        return -err;
    }
    return 0;
}
