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

/* The parent of n and its start time, from /proc/N/stat ("N (comm) S PPID
 * ..."; comm may hold spaces and parentheses, so the last ')' ends it;
 * starttime is field 22). -1 when unreadable. */
static pid_t parent_of(pid_t n, uint64_t *start_ticks)
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
    unsigned long long start = 0;
    /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime priority nice num_threads
     * itrealvalue starttime */
    if (!close || sscanf(close + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &state, &ppid, &start) < 2)
        return -1;
    if (start_ticks)
        *start_ticks = start;
    return (pid_t)ppid;
}

pid_t cli_children_parent(pid_t pid)
{
    pid_t p = parent_of(pid, NULL);
    return p > 0 ? p : 0;
}

uint64_t cli_children_now_ticks(void)
{
    char buf[64];
    double up;
    if (cli_proc_read_small("/proc/uptime", buf, sizeof(buf)) <= 0 || sscanf(buf, "%lf", &up) != 1)
        return 0;
    return (uint64_t)(up * (double)sysconf(_SC_CLK_TCK));
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

void cli_children_find(pid_t pid, uint64_t session_ticks, struct cli_children *c)
{
    memset(c, 0, sizeof(*c));
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long n = strtol(e->d_name, &end, 10);
        uint64_t start = 0;
        if (*end || n <= 0 || n == pid || parent_of((pid_t)n, &start) != pid || cli_proc_kernel_thread((pid_t)n))
            continue;
        struct cli_child k = { .pid = (pid_t)n, .rss = rss_of((pid_t)n) };
        /* uptime is read with a fraction, starttime in whole ticks: a child
         * of the same tick as the start counts as forked during it. */
        k.forked_during_session = session_ticks && start >= session_ticks;
        c->forked_during_session += k.forked_during_session;
        cli_proc_comm(k.pid, k.comm, sizeof(k.comm));
        c->count++;
        c->total_rss += k.rss;
        keep_largest(c, &k);
    }
    closedir(d);
}

size_t cli_children_descendants(pid_t root, pid_t *out, size_t cap)
{
    /* One pass over /proc for (pid, parent) pairs, then the tree from
     * root: a child forked while /proc is read may be missed, never one
     * that was there before. */
    size_t npairs = 0, capp = 256, n = 0;
    pid_t (*pairs)[2] = malloc(capp * sizeof(*pairs));
    DIR *d = pairs ? opendir("/proc") : NULL;
    if (!d) {
        free(pairs);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long k = strtol(e->d_name, &end, 10);
        if (*end || k <= 0)
            continue;
        pid_t pp = parent_of((pid_t)k, NULL);
        if (pp <= 0 || cli_proc_kernel_thread((pid_t)k))
            continue;
        if (npairs == capp) {
            void *np = realloc(pairs, capp * 2 * sizeof(*pairs));
            if (!np)
                break;
            pairs = np;
            capp *= 2;
        }
        pairs[npairs][0] = (pid_t)k;
        pairs[npairs][1] = pp;
        npairs++;
    }
    closedir(d);
    /* Breadth first: out[0..n) are found, each looked up as a parent in turn. */
    pid_t parent = root;
    for (size_t head = 0;; head++) {
        for (size_t i = 0; i < npairs && n < cap; i++)
            if (pairs[i][1] == parent)
                out[n++] = pairs[i][0];
        if (head >= n)
            break;
        parent = out[head];
    }
    free(pairs);
    return n;
}
