/* stopwatch.h - a census that ends when the process is stopped.
 *
 * A process stopped by SIGSTOP (or job control) in the middle of a census
 * stops its agent too: no FORKED, no END would come, and the cli waited
 * out the census's 130 s bound (a thread held for its registers and
 * stopped meanwhile could add a second a thread on top). While the census
 * runs, a thread of the cli looks at the process's state every 100 ms;
 * stopped for CLI_STOPWATCH_MS, it shuts the socket down, so that the
 * census returns at once, and says so. */
#ifndef HI_CLI_CENSUS_STOPWATCH_H
#define HI_CLI_CENSUS_STOPWATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#define CLI_STOPWATCH_MS 1000

struct cli_stopwatch {
    pthread_t thread;
    bool running;
    pid_t pid;
    int fd;                 /* the agent's socket, shut down when stopped */
    int done;               /* the census is over: the thread ends (atomic) */
    int fired;              /* the process was seen stopped (atomic) */
};

/* Starts watching pid (fd: the socket to shut down). 0 or -errno (then
 * nothing is watched). */
int cli_stopwatch_start(struct cli_stopwatch *w, pid_t pid, int fd);

/* Ends the watch; true when it fired. */
bool cli_stopwatch_stop(struct cli_stopwatch *w);

#endif /* HI_CLI_CENSUS_STOPWATCH_H */
