/* exited.c - what a process that exited during a session left: the
 * snapshot its profiler wrote as it ended (session.h, issue 28). */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "cli/link/last_snapshot.h"
#include "cli/process/paths.h"
#include "cli/process/proc.h"
#include "cli/util/exitcode.h"
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

/* The directory of a socket path ("/tmp/heapinject-0/12.sock" ->
 * "/tmp/heapinject-0"), into dir. false when it has none. */
static bool dir_of(const char *sock, char *dir, size_t len)
{
    const char *slash = strrchr(sock, '/');
    if (!slash || slash == sock || (size_t)(slash - sock) >= len)
        return false;
    memcpy(dir, sock, (size_t)(slash - sock));
    dir[slash - sock] = '\0';
    return true;
}

static struct cli_target *in_session(struct cli_session *s, pid_t pid)
{
    for (size_t i = 0; i < s->ntargets; i++)
        if (s->targets[i].pid == pid)
            return &s->targets[i];
    return NULL;
}

#define ENDED_DIRS 8
#define ENDED_MAX 64

typedef char ended_dir[sizeof(((struct cli_sock_path *)0)->local)];

/* The directories of the targets' users, where their children's
 * profilers had their sockets too (at most ENDED_DIRS): their count. */
static size_t ended_dirs(const struct cli_session *s, ended_dir *dirs)
{
    size_t ndirs = 0, nt = s->ntargets;
    for (size_t i = 0; i < nt && ndirs < ENDED_DIRS; i++) {
        struct cli_sock_path c[CLI_SOCKET_CANDIDATES];
        int n = cli_paths_socket_candidates(s->targets[i].pid, c);
        for (int k = 0; k < n && ndirs < ENDED_DIRS; k++) {
            char d[sizeof(dirs[0])];
            bool seen = false;
            if (!dir_of(c[k].local, d, sizeof(d)))
                continue;
            for (size_t j = 0; j < ndirs && !seen; j++)
                seen = !strcmp(dirs[j], d);
            if (!seen)
                memcpy(dirs[ndirs++], d, sizeof(d));
        }
    }
    return ndirs;
}

void cli_session_watch_ended(const struct cli_session *s, int ifd)
{
    ended_dir dirs[ENDED_DIRS];
    size_t n = ended_dirs(s, dirs);
    for (size_t j = 0; j < n; j++) /* a directory watched already keeps its watch */
        inotify_add_watch(ifd, dirs[j], IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR);
}

size_t cli_session_add_ended(struct cli_session *s)
{
    ended_dir dirs[ENDED_DIRS];
    size_t ndirs = ended_dirs(s, dirs), added = 0, nt = s->ntargets;
    struct cli_last_entry *e = calloc(ENDED_MAX, sizeof(*e));
    if (!e)
        return 0;
    for (size_t j = 0; j < ndirs; j++) {
        size_t n = cli_last_snapshot_scan(dirs[j], e, ENDED_MAX);
        for (size_t k = 0; k < n; k++) {
            bool child = false;
            for (size_t i = 0; i < nt && !child; i++)
                child = s->targets[i].pid == e[k].ppid;
            if (!child)
                continue;
            struct cli_target *t = in_session(s, e[k].pid);
            /* One seen in the tree as it ended, whose socket was already
             * gone (its attach then failed: "has exited"), left its file a
             * moment later: still its own (svc_pgbench, a backend of
             * another user's directory). Any other is in the report
             * already. */
            if (t && (t->state == CLI_TARGET_LINKED || t->last || t->code == CLI_EXIT_OK))
                continue;
            if (!t && !(t = cli_session_add(s, e[k].pid)))
                break;
            t->ppid = e[k].ppid;
            t->late = true; /* it was not there to be selected */
            t->state = CLI_TARGET_CLOSED;
            t->code = CLI_EXIT_NOPROC;
            snprintf(t->sock.local, sizeof(t->sock.local), "%s", e[k].sock);
            if (cli_session_take_last(t) > 0)
                added++;
        }
    }
    free(e);
    return added;
}
