/* stop_signals.h - how a profiling session learns that the user wants it
 * to end (Ctrl-C, kill, the terminal closing), shared by the one-process
 * session (profile.c) and the session of many (profile_many.c). */
#ifndef HI_CLI_CMD_STOP_SIGNALS_H
#define HI_CLI_CMD_STOP_SIGNALS_H

#include <signal.h>

/* SIGINT, SIGTERM and SIGHUP get a handler that only records the signal,
 * and are blocked; SIGPIPE is ignored (a reader gone is an error to
 * report, not a death). *oldmask gets the mask before, to put back with
 * sigprocmask(SIG_SETMASK) at the end; *waitmask is that mask with the
 * three unblocked: the one to wait with (ppoll), so that a signal is taken
 * only while waiting, never in the middle of a step. */
void cli_stop_signals_catch(sigset_t *oldmask, sigset_t *waitmask);

/* The last of the three signals taken, or 0. */
int cli_stop_signals_caught(void);

#endif /* HI_CLI_CMD_STOP_SIGNALS_H */
