/* stopwatch.c - see stopwatch.h. */
#include "cli/census/stopwatch.h"
#include "cli/process/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Whether /proc/PID/task/TID/stat shows 'T' (group stop: SIGSTOP,
 * SIGTSTP...). Not 't': the cli's own freeze holds threads in a trace
 * stop. */
static bool thread_stopped(pid_t pid, const char *tid)
{
    char path[320], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return false;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'T';
}

/* Any thread of the process in a group stop: the threads the freeze
 * holds (the main one among them) show 't' while the rest, the agent
 * included, stop with 'T'. */
static bool stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool any = false;
    struct dirent *e;
    while (!any && (e = readdir(d)))
        any = e->d_name[0] != '.' && thread_stopped(pid, e->d_name);
    closedir(d);
    return any;
}

static void *watch(void *arg)
{
    struct cli_stopwatch *w = arg;
    int stopped_ms = 0;
    while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
        struct timespec ts = { 0, 100 * 1000000L };
        nanosleep(&ts, NULL);
        stopped_ms = stopped(w->pid) ? stopped_ms + 100 : 0;
        if (stopped_ms >= CLI_STOPWATCH_MS && !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&w->fired, 1, __ATOMIC_RELEASE);
            shutdown(w->fd, SHUT_RDWR); /* the census's reads end at once */
            break;
        }
    }
    return NULL;
}

int cli_stopwatch_start(struct cli_stopwatch *w, pid_t pid, int fd)
{
    memset(w, 0, sizeof(*w));
    w->pid = pid;
    w->fd = fd;
    int rc = pthread_create(&w->thread, NULL, watch, w);
    if (rc)
        return -rc;
    w->running = true;
    return 0;
}

bool cli_stopwatch_stop(struct cli_stopwatch *w)
{
    if (w->running) {
        __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
        pthread_join(w->thread, NULL);
        w->running = false;
    }
    return __atomic_load_n(&w->fired, __ATOMIC_ACQUIRE);
}
