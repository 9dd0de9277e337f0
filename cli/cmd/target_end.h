/* target_end.h - how a target ended during a session, as far as a process
 * that is not its parent can tell.
 *
 * The cli cannot wait() for the target. What it can see: the agent's
 * connection closing, /proc/PID turning into a zombie or going away, and,
 * while the zombie is there (until its parent reaps it), the status in
 * field 52 of /proc/PID/stat. Whatever it could not see is said unknown. */
#ifndef HI_CLI_TARGET_END_H
#define HI_CLI_TARGET_END_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_target_end {
    pid_t pid;
    uint64_t start_ticks;   /* field 22 of /proc/PID/stat: tells our process from a reused pid */
    bool leader_died;       /* the main thread was seen a zombie while the process ran: its
                               status is its own pthread_exit, not the process's */
    bool known;             /* the status below was read from the zombie */
    int signal;             /* killed by this signal (known, > 0) */
    int exit_code;          /* exited with this code (known, signal 0) */
    bool core_dumped;
};

/* Starts watching pid (at the start of the session). */
void cli_target_end_watch(struct cli_target_end *e, pid_t pid);

/* Cheap (one read of /proc/PID/stat): call now and then while the
 * process runs, so that a main thread gone early is noticed. */
void cli_target_end_check(struct cli_target_end *e);

/* Once the process is gone: reads its status if its zombie is still there
 * (fills known, signal, exit_code, core_dumped). */
void cli_target_end_read(struct cli_target_end *e);

/* "killed by signal 9, SIGKILL", "exit code 3", or "exit status unknown:
 * ..." into buf. Returns buf. */
const char *cli_target_end_describe(const struct cli_target_end *e, char *buf, size_t len);

/* The agent's crash snapshot names the thread that got the signal (in
 * the target's pid namespace). A child that shares the target's memory
 * (vfork, clone(CLONE_VM)) runs an older payload's handler as if it were
 * the target: returns the process tid is a thread of when that is known
 * to be another process than pid, else 0 (the target's, or unknown: gone,
 * another pid namespace). */
pid_t cli_target_end_other_process(pid_t pid, pid_t tid);

#endif /* HI_CLI_TARGET_END_H */
