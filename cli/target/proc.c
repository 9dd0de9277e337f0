/* proc.c - small readers of /proc/PID for the cli. */
#include "cli/target/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Reads a small /proc file into buf (NUL-terminated). Returns bytes or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return (ssize_t)got;
}

bool cli_proc_alive(pid_t pid)
{
    char path[64], buf[4096];
    if (pid <= 0)
        return false;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_small(path, buf, sizeof(buf)) <= 0)
        return false;
    /* "pid (comm) S ...": the comm may contain ')' so look for the last. */
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return false;
    return p[2] != 'Z' && p[2] != 'X';
}

int cli_proc_uid(pid_t pid, uid_t *uid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    ssize_t n = read_small(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    const char *p = strstr(buf, "\nUid:");
    unsigned long real, eff;
    if (!p || sscanf(p + 5, "%lu %lu", &real, &eff) != 2)
        return -EINVAL;
    *uid = (uid_t)eff;
    return 0;
}

int cli_proc_same_mntns(pid_t pid)
{
    char path[64];
    struct stat self, other;
    snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
    if (stat("/proc/self/ns/mnt", &self) < 0 || stat(path, &other) < 0)
        return -errno;
    return self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

const char *cli_proc_comm(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    if (read_small(path, buf, len) <= 0) {
        snprintf(buf, len, "?");
        return buf;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

const char *cli_proc_cmdline(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_small(path, buf, len);
    if (n <= 0) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0' || buf[i] == '\n')
            buf[i] = ' ';
    buf[n] = '\0';
    return buf;
}

static uint64_t field_kb(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (!strncmp(p, name, nl) && p[nl] == ':')
            return strtoull(p + nl + 1, NULL, 10) * 1024u;
    }
    return 0;
}

int cli_proc_mem(pid_t pid, struct cli_proc_mem *m)
{
    char path[64], buf[4096];
    memset(m, 0, sizeof(*m));
    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    if (read_small(path, buf, sizeof(buf)) > 0) {
        m->rss = field_kb(buf, "Rss");
        m->pss = field_kb(buf, "Pss");
        m->uss = field_kb(buf, "Private_Clean") + field_kb(buf, "Private_Dirty");
        m->swap = field_kb(buf, "Swap");
        m->have_pss = true;
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    ssize_t n = read_small(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    unsigned long size, resident;
    if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
        return -EINVAL;
    m->rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

const char *cli_proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[80];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    if (read_small(path, buf, len) <= 0) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

bool cli_proc_exited_after_hangup(pid_t pid)
{
    for (int i = 0; i < 40; i++) {
        if (!cli_proc_alive(pid))
            return true;
        struct timespec ts = { 0, 50 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return false;
}
