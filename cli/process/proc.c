/* proc.c - small readers of /proc/PID for the cli. */
#include "cli/process/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/fmt.h"
#include "injector/maps.h"
#include "injector/target.h"

ssize_t cli_proc_read_small(const char *path, char *buf, size_t len)
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

/* "/proc/PID/task/TID" of a live thread of pid, so that reads describe the
 * process also when its main thread has exited (a zombie leader's maps,
 * smaps, statm, cmdline and namespaces read empty or fail); "/proc/PID"
 * when none is found. */
static const char *live_dir(pid_t pid, char *buf, size_t len)
{
    pid_t tid = inj_target_live_task(pid);
    if (tid > 0 && tid != pid)
        snprintf(buf, len, "/proc/%d/task/%d", (int)pid, (int)tid);
    else
        snprintf(buf, len, "/proc/%d", (int)pid);
    return buf;
}

char *cli_proc_maps_text(pid_t pid, size_t *len)
{
    char dir[64], path[96];
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    snprintf(path, sizeof(path), "%s/maps", live_dir(pid, dir, sizeof(dir)));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(buf);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    if (!n) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

bool cli_proc_alive(pid_t pid)
{
    /* A zombie main thread with live threads is a running process. */
    return pid > 0 && inj_target_live_task(pid) > 0;
}

bool cli_proc_kernel_thread(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return false;
    /* "pid (comm) state ppid pgrp session tty_nr tpgid flags": comm may
     * hold spaces and parentheses, so count from its last ')'. */
    const char *p = strrchr(buf, ')');
    unsigned long flags;
    return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & 0x00200000ul);
}

int cli_proc_uid(pid_t pid, uid_t *uid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    ssize_t n = cli_proc_read_small(path, buf, sizeof(buf));
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
    char path[96], dir[64];
    struct stat self, other;
    snprintf(path, sizeof(path), "%s/ns/mnt", live_dir(pid, dir, sizeof(dir)));
    if (stat("/proc/self/ns/mnt", &self) < 0 || stat(path, &other) < 0)
        return -errno;
    return self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

const char *cli_proc_comm_raw(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    if (cli_proc_read_small(path, buf, len) <= 0)
        snprintf(buf, len, "?");
    else
        buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

const char *cli_proc_comm(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    if (cli_proc_read_small(path, buf, len) <= 0) {
        snprintf(buf, len, "?");
        return buf;
    }
    buf[strcspn(buf, "\n")] = '\0';
    /* The process names itself (prctl): never raw on a terminal. */
    char raw[64];
    snprintf(raw, sizeof(raw), "%s", buf);
    return cli_fmt_printable(raw, buf, len);
}

const char *cli_proc_cmdline(pid_t pid, char *buf, size_t len)
{
    char path[96], dir[64];
    snprintf(path, sizeof(path), "%s/cmdline", live_dir(pid, dir, sizeof(dir)));
    ssize_t n = cli_proc_read_small(path, buf, len);
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
    char path[96], buf[4096], dir[64];
    memset(m, 0, sizeof(*m));
    live_dir(pid, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/smaps_rollup", dir);
    if (cli_proc_read_small(path, buf, sizeof(buf)) > 0) {
        m->rss = field_kb(buf, "Rss");
        m->pss = field_kb(buf, "Pss");
        m->uss = field_kb(buf, "Private_Clean") + field_kb(buf, "Private_Dirty");
        m->swap = field_kb(buf, "Swap");
        m->have_pss = true;
        return 0;
    }
    snprintf(path, sizeof(path), "%s/statm", dir);
    ssize_t n = cli_proc_read_small(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    unsigned long size, resident;
    if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
        return -EINVAL;
    m->rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

int cli_proc_rss_split(pid_t pid, struct cli_proc_rss_split *r)
{
    char path[96], buf[4096], dir[64];
    memset(r, 0, sizeof(*r));
    live_dir(pid, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/status", dir);
    ssize_t n = cli_proc_read_small(path, buf, sizeof(buf));
    if (n <= 0)
        return n < 0 ? (int)n : -ENODATA;
    r->anon = field_kb(buf, "RssAnon");
    r->file = field_kb(buf, "RssFile");
    r->shmem = field_kb(buf, "RssShmem");
    return 0;
}

const char *cli_proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[80];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    if (cli_proc_read_small(path, buf, len) <= 0) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[strcspn(buf, "\n")] = '\0';
    char raw[64]; /* the thread names itself: never raw on a terminal */
    snprintf(raw, sizeof(raw), "%s", buf);
    return cli_fmt_printable(raw, buf, len);
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

/* Whether a mapping's path names musl's libc or dynamic linker. */
static bool musl_path(const char *path)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    if (!base)
        return false;
    base++;
    /* Alpine maps /lib/ld-musl-ARCH.so.1; Debian's musl is
     * /usr/lib/ARCH-linux-musl/libc.so (ld-musl-* links to it). */
    return !strncmp(base, "ld-musl-", 8) || !strncmp(base, "libc.musl-", 10) ||
           (!strcmp(base, "libc.so") && strstr(path, "-linux-musl/"));
}

bool cli_proc_musl(pid_t pid, char *buf, size_t len)
{
    size_t n = 0;
    char *maps = cli_proc_maps_text(pid, &n);
    bool found = false;

    if (!maps)
        return false;
    for (char *line = maps; line && *line && !found;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        const char *path = strchr(line, '/');
        if (musl_path(path)) {
            snprintf(buf, len, "%s", path);
            found = true;
        }
        line = end ? end + 1 : NULL;
    }
    free(maps);
    return found;
}

bool cli_proc_musl_in(const struct inj_maps *maps, char *buf, size_t len)
{
    for (size_t i = 0; i < maps->n; i++)
        if (maps->v[i].path[0] == '/' && musl_path(maps->v[i].path)) {
            snprintf(buf, len, "%s", maps->v[i].path);
            return true;
        }
    return false;
}
