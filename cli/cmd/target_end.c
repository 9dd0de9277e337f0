/* target_end.c - how a target ended, from /proc (see target_end.h). */
#include "cli/cmd/target_end.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/process/proc.h"

#define STAT_STARTTIME 22 /* proc(5) field numbers */
#define STAT_EXIT_CODE 52 /* Linux 3.5+ */

struct stat_fields {
    char state;
    uint64_t start_ticks;
    long exit_code; /* -1: absent */
};

/* Reads the fields of /proc/PID/stat we use. 0 or -1 (gone, unreadable). */
static int read_stat(pid_t pid, struct stat_fields *f)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return -1;
    /* The command name (field 2) may hold spaces and ')': fields go on
     * after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    memset(f, 0, sizeof(*f));
    f->exit_code = -1;
    char *save = NULL;
    int field = 3;
    for (char *tok = strtok_r(p + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
        if (field == 3)
            f->state = tok[0];
        else if (field == STAT_STARTTIME)
            f->start_ticks = strtoull(tok, NULL, 10);
        else if (field == STAT_EXIT_CODE)
            f->exit_code = strtol(tok, NULL, 10);
    }
    return f->state ? 0 : -1;
}

void cli_target_end_watch(struct cli_target_end *e, pid_t pid)
{
    struct stat_fields f;
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    if (read_stat(pid, &f) == 0)
        e->start_ticks = f.start_ticks;
    cli_target_end_check(e);
}

void cli_target_end_check(struct cli_target_end *e)
{
    struct stat_fields f;
    /* A zombie leader of a process that still runs (pthread_exit in main):
     * when the process ends, field 52 may keep the leader's own 0 (older
     * kernels; 6.18 was seen to give the process's status), so it is not
     * told at all. */
    if (read_stat(e->pid, &f) == 0 && f.start_ticks == e->start_ticks && (f.state == 'Z' || f.state == 'X') &&
        cli_proc_alive(e->pid))
        e->leader_died = true;
}

void cli_target_end_read(struct cli_target_end *e)
{
    struct stat_fields f;
    /* Only a zombie's field 52 is its status; a reused pid is another
     * process. */
    if (e->leader_died || read_stat(e->pid, &f) < 0 || f.start_ticks != e->start_ticks ||
        (f.state != 'Z' && f.state != 'X') || f.exit_code < 0)
        return;
    int st = (int)f.exit_code;
    if (WIFSIGNALED(st)) {
        e->signal = WTERMSIG(st);
        e->core_dumped = WCOREDUMP(st);
    } else if (WIFEXITED(st)) {
        e->exit_code = WEXITSTATUS(st);
    } else {
        return;
    }
    e->known = true;
}

/* The Tgid line of /proc/TID/status: the process TID is a thread of. */
static pid_t tgid_of(pid_t tid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return 0;
    const char *p = strstr(buf, "\nTgid:");
    return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
}

static bool same_pid_ns(pid_t pid)
{
    char path[64], a[64], b[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
    ssize_t n = readlink(path, a, sizeof(a));
    ssize_t m = readlink("/proc/self/ns/pid", b, sizeof(b));
    return n > 0 && n == m && memcmp(a, b, (size_t)n) == 0;
}

pid_t cli_target_end_other_process(pid_t pid, pid_t tid)
{
    if (tid <= 0 || !same_pid_ns(pid))
        return 0;
    pid_t tgid = tgid_of(tid);
    return tgid > 0 && tgid != pid ? tgid : 0;
}

const char *cli_target_end_describe(const struct cli_target_end *e, char *buf, size_t len)
{
    if (!e->known) {
        snprintf(buf, len, "exit status unknown: only its parent gets it%s",
                 e->leader_died ? ", and its main thread had exited before" : "");
    } else if (e->signal) {
        const char *name = sigabbrev_np(e->signal);
        snprintf(buf, len, "killed by signal %d%s%s%s", e->signal, name ? ", SIG" : "", name ? name : "",
                 e->core_dumped ? ", core dumped" : "");
    } else {
        snprintf(buf, len, "exit code %d", e->exit_code);
    }
    return buf;
}
