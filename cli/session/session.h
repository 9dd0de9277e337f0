/* session.h - the processes one command works on, each with its link.
 *
 * Every command that talks to an agent goes through a session: the
 * one-shot profile, attach, snapshot, detach, rate, status, census and trim.
 * A session holds a set of targets, each with its pid, its link to the
 * agent (cli/link/client.h), the socket it was reached on and its state.
 * Today a command has one target (-p PID); this is the seam where "every
 * process of a service" goes: a session of several targets, each attached,
 * asked and detached through the same calls.
 *
 * The calls wrap cli/link/attach.h: they print what went wrong and return
 * an enum cli_exit, as those do. */
#ifndef HI_CLI_SESSION_SESSION_H
#define HI_CLI_SESSION_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli/link/attach.h"
#include "cli/link/client.h"
#include "cli/process/paths.h"

/* How many targets a session holds (-p PID,PID,... and --children). */
#define CLI_SESSION_MAX_TARGETS 256
/* How many targets are attached, asked or detached at the same time: each
 * attach stops one thread of its target for milliseconds and keeps a cli
 * thread busy; the machine's cores bound what runs in parallel anyway. */
#define CLI_SESSION_PARALLEL 4
/* Attaches, though, mostly wait: for the held thread's ptrace stops and
 * for the target to run the payload's start, each a round trip that needs
 * the cli and the target scheduled (about 45 ms of CPU per process, cli
 * and target together, spread over 250+ ms). 16 at a time overlap those
 * waits: PostgreSQL's 14 processes under pgbench -c 8 attached in a median
 * 2.5 s instead of 3.9 s at load 34 (bench/service.py). */
#define CLI_SESSION_ATTACH_PARALLEL 16

enum cli_target_state {
    CLI_TARGET_NEW,       /* added, no link yet */
    CLI_TARGET_LINKED,    /* the link is up (HELLO done) */
    CLI_TARGET_CLOSED,    /* the link was closed (what it reported stays in link.error) */
};

struct cli_target {
    pid_t pid;
    struct cli_client link;     /* to the agent in pid */
    struct cli_sock_path sock;  /* where the link was reached */
    enum cli_target_state state;
    bool ours;                  /* attached by this command, which detaches it */
    char comm[64];              /* its name when added (printable) */
    pid_t ppid;                 /* its parent when added; 0 unknown */
    double attach_ms;           /* how long its attach took (cli_session_attach_all) */
    int code;                   /* CLI_EXIT_OK, or why it has no link (enum cli_exit) */
    bool late;                  /* appeared during the session (forked after its start) */
    bool watching;              /* WATCH sent: its TICKs come, kept in link
                                   (a one-shot session of several) */
    bool followed;              /* joined by the profiler its fork gave it (not attached) */
    bool gone_unsaid;           /* appeared and could not be attached: said at the session's end,
                                   once its last snapshot had its chance */
    /* It exited during the session and left the snapshot its profiler
     * wrote as it ended (PID.last): reported with how it ended. Owned;
     * cli_session_gather takes it. */
    struct cli_profile *last;
    struct cli_target_exit exit;
};

struct cli_session {
    struct cli_target targets[CLI_SESSION_MAX_TARGETS];
    size_t ntargets;
};

/* An empty session. */
void cli_session_init(struct cli_session *s);

/* Adds the target pid (state NEW, link unconnected). NULL when the session
 * holds CLI_SESSION_MAX_TARGETS already. */
struct cli_target *cli_session_add(struct cli_session *s, pid_t pid);

/* Attaches a profiler to t->pid with o's settings (o->pid is t's) and
 * links to it: cli_attach. */
int cli_session_attach(struct cli_target *t, const struct cli_attach_options *o);

/* Links to the profiler already attached to t->pid: cli_attach_connect_existing. */
int cli_session_connect(struct cli_target *t, bool quiet);

/* For one request: the profiler already there, or one attached for it
 * (t->ours): cli_attach_for_request. */
int cli_session_attach_for_request(struct cli_target *t, const struct cli_attach_options *o);

/* Closes t's link (state CLOSED). Closing without OWN_SESSION leaves an
 * agent running; the link's error is cleared. */
void cli_session_close_target(struct cli_target *t);

/* A request to t's agent failed: says whether the process exited meanwhile
 * (CLI_EXIT_NOPROC) or the request did (CLI_EXIT_FAILURE), with the link's
 * error, and closes the link. what names the request ("snapshot"). */
int cli_session_request_failed(struct cli_target *t, const char *what);

/* Closes every target's link that is still open. */
void cli_session_close(struct cli_session *s);

/* The preamble of a command that asks an attached profiler one thing: an
 * empty session, pid added, linked (cli_session_connect). The target, or
 * NULL with *code the exit code (said on stderr). */
struct cli_target *cli_session_connect_one(struct cli_session *s, pid_t pid, int *code);

/* Adds pids[0..n), then, with cgroup (a cgroup v2 directory: absolute, or
 * relative to /sys/fs/cgroup), every process its cgroup.procs lists and,
 * with children, every descendant of each alive now
 * (cli/process/children.h), each once, with its comm and parent. A pid
 * that is no process is added too (its attach says why); a cgroup that
 * cannot be read is said on stderr. Past CLI_SESSION_MAX_TARGETS the rest
 * is left out and said on stderr. Returns how many were added. */
size_t cli_session_select(struct cli_session *s, const pid_t *pids, size_t n, bool children, const char *cgroup);

/* Runs fn(t, arg) for every target whose state is `state`, up to
 * CLI_SESSION_PARALLEL at a time (threads; each target is used by one
 * thread only). 0 or -errno when no thread could be started (then fn ran
 * for each in turn here). */
int cli_session_each(struct cli_session *s, enum cli_target_state state, void (*fn)(struct cli_target *, void *),
                     void *arg);

/* Attaches every NEW target with o's settings (o->pid is each one's),
 * concurrently (cli_session_each); with own, takes each session over at
 * once (OWN_SESSION: the agent leaves when this cli goes). Sets each
 * target's state, code and attach_ms; a target that failed was said on
 * stderr and is left untouched (injector: nothing half-attached). Returns
 * how many are linked. */
size_t cli_session_attach_all(struct cli_session *s, const struct cli_attach_options *o, bool own);

/* Every NEW target: linked to the profiler already in it (a child forked
 * by a profiled process may have one of its own, found by its pid's
 * socket), else attached with o's settings; owned at once either way
 * (t->ours). Concurrent as cli_session_attach_all. Returns how many of
 * them are linked now. */
size_t cli_session_join_new(struct cli_session *s, const struct cli_attach_options *o);

/* Links to the profiler of every NEW target (cli_session_connect, quiet
 * when asked). Returns how many are linked. */
size_t cli_session_connect_all(struct cli_session *s, bool quiet);

/* t's process hung up on its link (exited): waits (2 s at most) for it to
 * be gone or a zombie, then takes the snapshot its profiler wrote as it
 * ended into t->last and t->exit, and removes the file. 1 taken, 0 none
 * (an _exit, a SIGKILL, or no last snapshot asked), < 0 unreadable (said). */
int cli_session_take_last(struct cli_target *t);

/* The children of the session's processes that exited since they were
 * attached (`attach --children`: forks followed) and left their last
 * snapshots (PID.last, its header's ppid a target's pid): each added as a
 * target, closed, with t->last taken (cli_session_take_last: the file is
 * removed). Returns how many. */
size_t cli_session_add_ended(struct cli_session *s);

/* Adds inotify watches (ifd, inotify_init1's) on the directories where
 * the session's processes' children leave their last snapshots: a file
 * written or moved in there makes ifd readable, so that a session that
 * follows forks takes each in as it appears (cli_session_add_ended)
 * rather than at its next look, before a directory's bound of 16 files
 * replaces older ones. Again after new targets (a directory watched
 * already keeps its watch). */
void cli_session_watch_ended(const struct cli_session *s, int ifd);

/* The wording of an enum cli_exit for a target left out ("no such
 * process", "permission denied", ...). */
const char *cli_session_code_words(int code);

#endif /* HI_CLI_SESSION_SESSION_H */
