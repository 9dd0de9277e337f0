/* exited.c - what a process that exited during a session left: the
 * snapshot its profiler wrote as it ended (session.h, issue 28). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/link/last_snapshot.h"
#include "cli/process/proc.h"
#include "cli/session/session.h"

/* 'Z', 0 when gone, else its state letter ('?' unreadable). */
static char state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

int cli_session_take_last(struct cli_target *t)
{
    /* The link hangs up when the process's descriptors close, in exit,
     * after its profiler wrote the file (its exit handler waits for that)
     * and before the kernel makes it a zombie: a moment. */
    for (int i = 0; i < 200; i++) {
        char st = state_of(t->pid);
        if (st == 0 || st == 'Z' || st == 'X')
            break;
        struct timespec ts = { 0, 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
    struct cli_profile *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    char note[320], path[PATH_MAX];
    int rc = cli_last_snapshot_take_exit(t->pid, p, note, sizeof(note), path, sizeof(path), &t->exit,
                                         t->sock.local);
    if (rc <= 0) {
        free(p);
        return rc;
    }
    unlink(path); /* handed over to this session: nothing stays behind */
    free(t->last);
    t->last = p;
    return 1;
}
