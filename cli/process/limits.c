/* limits.c - refusing, before anything is loaded, a process whose limits
 * leave no room for the profiler (issue 25, item 9c).
 *
 * With every descriptor in use the injected dlopen of the profiler fails
 * with EMFILE (and its socket would); at RLIMIT_NPROC the agent thread's
 * clone and the census's fork fail with EAGAIN. Each used to end as a
 * bare "dlopen failed ... Too many open files" (exit 1) or a failure deep
 * in the agent; said here in words, with README's exit code for a process
 * that cannot take us now (6, busy), the process untouched. */
#include "cli/process/limits.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/exitcode.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_SYS_RESOURCE_BIT 24

/* The soft limit of /proc/PID/limits' line `name`: -1 unlimited or unread. */
static long soft_limit(pid_t pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
    FILE *f = fopen(path, "re");
    long v = -1;
    if (!f)
        return -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, name, n)) {
            char *end;
            long x = strtol(line + n, &end, 10);
            if (end != line + n)
                v = x; /* "unlimited" reads as no number */
            break;
        }
    fclose(f);
    return v;
}

/* Descriptors of pid numbered below limit; -1 unreadable. */
static long fds_below(pid_t pid, long limit)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && strtol(e->d_name, NULL, 10) < limit)
            n++;
    closedir(d);
    return n;
}

/* Real uid, thread count and effective capabilities from a status file. */
static int read_status(pid_t pid, long *ruid, long *threads, unsigned long long *capeff)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int got = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "Uid: %ld", ruid) == 1)
            got |= 1;
        else if (sscanf(line, "Threads: %ld", threads) == 1)
            got |= 2;
        else if (capeff && sscanf(line, "CapEff: %llx", capeff) == 1)
            got |= 4;
    }
    fclose(f);
    return (got & 3) == 3 ? 0 : -1;
}

/* Tasks (threads) of the whole machine: /proc/loadavg's fourth field,
 * "running/total"; -1 when unreadable. */
static long machine_tasks(void)
{
    FILE *f = fopen("/proc/loadavg", "re");
    long run, total;
    int ok = f && fscanf(f, "%*s %*s %*s %ld/%ld", &run, &total) == 2;
    if (f)
        fclose(f);
    return ok ? total : -1;
}

/* Tasks (threads) of real uid, the count RLIMIT_NPROC limits. */
static long tasks_of(long uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long u, t;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (read_status((pid_t)strtol(e->d_name, NULL, 10), &u, &t, NULL) == 0 && u == uid)
            n += t;
    }
    closedir(d);
    return n;
}

int cli_limits_check(pid_t pid, int tasks)
{
    long files = soft_limit(pid, "Max open files");
    long used = files > 0 ? fds_below(pid, files) : -1;
    if (used >= 0 && used >= files) {
        fprintf(stderr, "heapinject: pid %d has no free file descriptor (RLIMIT_NOFILE %ld reached): the "
                        "profiler cannot be loaded nor open its socket. Nothing was done; the process runs on "
                        "as it was (raise its limit with prlimit --pid %d --nofile=N, or retry once it has "
                        "closed some).\n", (int)pid, files, (int)pid);
        return CLI_EXIT_BUSY;
    }
    long nproc = soft_limit(pid, "Max processes");
    long uid, threads;
    unsigned long long cap = 0;
    if (nproc < 0 || read_status(pid, &uid, &threads, &cap) < 0 || uid == 0 ||
        cap & (1ull << CAP_SYS_ADMIN_BIT | 1ull << CAP_SYS_RESOURCE_BIT))
        return CLI_EXIT_OK; /* root and these capabilities are not held to it */
    /* Every task of the machine (loadavg's "running/total") is a bound on
     * the user's: under the limit with room, the count per user (a read
     * of every /proc/PID/status, the most costly part of an attach on a
     * busy machine) is not needed. */
    long all = machine_tasks();
    if (all >= 0 && all + tasks <= nproc)
        return CLI_EXIT_OK;
    long have = tasks_of(uid);
    if (have >= 0 && have + tasks > nproc) {
        fprintf(stderr, "heapinject: pid %d's user (uid %ld) has %ld processes and threads, and its "
                        "RLIMIT_NPROC is %ld: the profiler needs %d more (%s). Nothing was done; the process runs "
                        "on as it was (raise its limit with prlimit --pid %d --nproc=N).\n", (int)pid, uid, have,
                nproc, tasks, tasks > 1 ? "its thread, and the census's copy of the process" : "its thread",
                (int)pid);
        return CLI_EXIT_BUSY;
    }
    return CLI_EXIT_OK;
}
