/* attach.h - get an agent running in a target and connect to it; find an
 * agent that is already there. Shared by the one-shot session and the
 * attach/status/snapshot/detach commands. Functions here print what went
 * wrong (and what to do) on stderr and return a cli exit code. */
#ifndef HI_CLI_ATTACH_H
#define HI_CLI_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/link/client.h"
#include "cli/process/paths.h"
#include "injector/inject.h"

struct cli_attach_options {
    pid_t pid;
    uint64_t rate;           /* mean bytes between samples (>= 1) */
    uint64_t ttl_s;
    bool watch_cli;          /* the caller will own the session: the agent
                                leaves once this process exits unowned */
    enum inj_method via;
    bool verbose;
    bool crash_snapshot;     /* the agent pushes a snapshot at a fatal signal */
    bool pressure_snapshot;  /* and at memory pressure (common/config.h) */
    bool follow_forks;       /* fork children get agents (config follow=1) */
    bool lazy_children;      /* lazily, with follow_forks (config follow=2) */
    bool pymalloc;           /* CPython's allocator sampled (config pymalloc=1) */
    bool last_snapshot;      /* a last snapshot file at exit (config last=1) */
};

/* CLOCK_MONOTONIC ns at the start of main(), set by main.c when the
 * environment has HEAPINJECT_TIMING=1; cli_attach then prints its phase
 * times on stderr (the bench's per-phase breakdown of an attach). */
extern uint64_t cli_attach_main_ns;

/* Checks the target, makes sure no agent runs there yet, injects the
 * payload with the session's settings and connects (HELLO done). On
 * success returns CLI_EXIT_OK with c connected and *sock set; otherwise an
 * enum cli_exit after printing the reason. */
int cli_attach(const struct cli_attach_options *o, struct cli_client *c, struct cli_sock_path *sock);

/* pid names a whole process, not one of its threads (a thread id has a
 * /proc/TID of its own, and looks like a process that was never
 * attached). CLI_EXIT_OK, or CLI_EXIT_USAGE after saying which process it
 * belongs to (unless quiet). */
int cli_attach_check_is_process(pid_t pid, bool quiet);

/* Connects to the agent already running in pid (HELLO done). Returns
 * CLI_EXIT_OK, CLI_EXIT_NOTATTACHED (no agent: nothing printed when quiet),
 * CLI_EXIT_NOPROC, CLI_EXIT_PERM, CLI_EXIT_USAGE (pid is a thread id:
 * cli_attach_check_is_process) or CLI_EXIT_FAILURE, printing the reason unless
 * quiet. */
int cli_attach_connect_existing(pid_t pid, struct cli_client *c, struct cli_sock_path *sock, bool quiet);

/* For a command that needs the agent for one request (census, trim): the
 * profiler already attached to o->pid, used and left attached (*ours
 * false); else one attached for this command (*ours true), owned by this
 * cli at once: a short time-to-live (o->ttl_s) and the watch on the cli
 * cover the moment before, and the caller detaches it when done. Returns
 * CLI_EXIT_OK with c connected, or an enum cli_exit after printing why. */
int cli_attach_for_request(const struct cli_attach_options *o, struct cli_client *c, struct cli_sock_path *sock,
                           bool *ours);

/* After a detach: reads every malloc-family GOT slot of pid back through
 * /proc (cli/process/slots.h) and writes into msg what it found: "all N
 * allocator slots of M modules, hooked or not, read back: none points into the profiler",
 * or which still do. Returns 1 when every slot was verified back, 0 when
 * some still point into the profiler, -errno when they could not be read
 * (-ESRCH: the process is gone). */
int cli_attach_verify_unhooked(pid_t pid, char *msg, size_t len);

/* The agent of a live pid went away: says why when the process shows it.
 * Returns true, with "pid N exec'd ..." in why, when pid runs another
 * program image now (alive, libheapinject.so no longer mapped: exec took
 * the profiler and every hook with the old image). Otherwise false, with
 * why "" or what the process is doing (stopped, ...). Never waits. */
bool cli_attach_explain_loss(pid_t pid, char *why, size_t len);

/* The agent's connection closed during the attach: whether pid is gone
 * (or a zombie). Waits up to 100 ms: a killed process closes its socket
 * a moment before its threads are zombies (exit_files before exit_notify),
 * and heapinject_start takes about a millisecond, so a kill during the
 * attach often lands there. */
bool cli_attach_target_gone(pid_t pid);

/* The cli exit code for an enum inj_error. */
int cli_attach_exit_from_inj(int inj_error);

/* The cli exit code for a heapinject_start() status, printing the reason. */
int cli_attach_start_status(pid_t pid, int status);

#endif /* HI_CLI_ATTACH_H */
