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

/* How many targets a session holds: one per command today. */
#define CLI_SESSION_MAX_TARGETS 1

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

#endif /* HI_CLI_SESSION_SESSION_H */
