/* uffd_check.c - a census refused before attaching when the process has a
 * userfaultfd with UFFD_FEATURE_EVENT_FORK (common/uffd_fdinfo.h). */
#include "cli/census/uffd_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/uffd_fdinfo.h"

/* The features of pid's descriptor fd, -1 when unreadable. */
static int64_t features_of(pid_t pid, int fd)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    ssize_t r = read(f, buf, sizeof(buf) - 1);
    close(f);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    return hi_uffd_features(buf);
}

int cli_census_uffd_fork_fd(pid_t pid)
{
    char path[64], link[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (!hi_uffd_is_link(link))
            continue;
        int64_t f = features_of(pid, fd);
        if (f >= 0 && (f & UFFD_FEATURE_EVENT_FORK))
            found = fd;
    }
    closedir(d);
    return found;
}
