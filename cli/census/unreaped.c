/* unreaped.c - census copies their parent has not reaped (unreaped.h). */
#include "cli/census/unreaped.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COPY_COMM "heapinject-cen" /* the copy's name (payload/census.c) */

/* /proc/PID/stat's comm and state, and ppid. 0, or -1 when gone. */
static int stat_of(pid_t pid, char *comm, size_t len, char *state, pid_t *ppid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return -1;
    size_t c = (size_t)(close_paren - open_paren - 1);
    snprintf(comm, len, "%.*s", (int)c, open_paren + 1);
    int pp = 0;
    if (sscanf(close_paren + 1, " %c %d", state, &pp) != 2)
        return -1;
    *ppid = pp;
    return 0;
}

/* Zombie copies among the children of every thread of parent. */
static int count(pid_t parent, pid_t *one)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)parent);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char cpath[320], list[4096];
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)parent, e->d_name);
        int fd = open(cpath, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, list, sizeof(list) - 1);
        close(fd);
        if (r <= 0)
            continue;
        list[r] = '\0';
        for (char *tok = strtok(list, " \n"); tok; tok = strtok(NULL, " \n")) {
            char comm[32], state = 0;
            pid_t kid = (pid_t)atoi(tok), pp;
            if (stat_of(kid, comm, sizeof(comm), &state, &pp) == 0 && state == 'Z' && !strcmp(comm, COPY_COMM)) {
                n++;
                *one = kid;
            }
        }
    }
    closedir(d);
    return n;
}

int cli_census_unreaped(pid_t pid, int wait_ms, pid_t *parent, pid_t *one)
{
    char comm[32], state;
    pid_t pp;
    if (stat_of(pid, comm, sizeof(comm), &state, &pp) < 0 || pp <= 1)
        return 0; /* init reaps every child */
    *parent = pp;
    for (int waited = 0;; waited += 20) {
        int n = count(pp, one);
        if (!n || waited >= wait_ms)
            return n;
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
    }
}
