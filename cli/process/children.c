/* children.c - the child processes of a target, from /proc/N/stat.
 *
 * /proc/PID/task/TID/children exists only with CONFIG_PROC_CHILDREN and
 * lists the children of one thread, so every /proc/N/stat is read instead:
 * its fourth field is the parent's pid. A few thousand processes take a
 * few milliseconds. */
#include "cli/process/children.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/process/proc.h"

/* The parent of n, from /proc/N/stat ("N (comm) S PPID ..."; comm may hold
 * spaces and parentheses, so the last ')' ends it). -1 when unreadable. */
static pid_t parent_of(pid_t n)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)n);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *close = strrchr(buf, ')');
    int ppid;
    char state;
    if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return (pid_t)ppid;
}

/* Resident bytes of n from /proc/N/statm; 0 when unreadable. */
static uint64_t rss_of(pid_t n)
{
    char path[64];
    unsigned long size, resident;
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)n);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int got = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return got == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* Keeps the CLI_CHILDREN_LISTED largest, sorted by RSS descending. */
static void keep_largest(struct cli_children *c, const struct cli_child *k)
{
    size_t at = c->nlisted;
    while (at > 0 && c->listed[at - 1].rss < k->rss)
        at--;
    if (at >= CLI_CHILDREN_LISTED)
        return;
    size_t last = c->nlisted < CLI_CHILDREN_LISTED ? c->nlisted : CLI_CHILDREN_LISTED - 1;
    memmove(&c->listed[at + 1], &c->listed[at], (last - at) * sizeof(c->listed[0]));
    c->listed[at] = *k;
    if (c->nlisted < CLI_CHILDREN_LISTED)
        c->nlisted++;
}

void cli_children_find(pid_t pid, struct cli_children *c)
{
    memset(c, 0, sizeof(*c));
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long n = strtol(e->d_name, &end, 10);
        if (*end || n <= 0 || n == pid || parent_of((pid_t)n) != pid || cli_proc_kernel_thread((pid_t)n))
            continue;
        struct cli_child k = { .pid = (pid_t)n, .rss = rss_of((pid_t)n) };
        cli_proc_comm(k.pid, k.comm, sizeof(k.comm));
        c->count++;
        c->total_rss += k.rss;
        keep_largest(c, &k);
    }
    closedir(d);
}
