/* seccomp_gate.h - the cli's side of a seccomp filter the target installed
 * after attach (common/seccomp_gate.h): it reads the new filters through
 * ptrace, tells the sealed agent which of its calls are allowed, and does
 * from outside what the agent may not (GOT slots put back through
 * /proc/PID/mem). */
#ifndef HI_CLI_PROCESS_SECCOMP_GATE_H
#define HI_CLI_PROCESS_SECCOMP_GATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/seccomp_gate.h"

struct cli_gate_result {
    bool sealed;        /* a filter came after attach */
    bool known;         /* the new filters could be read and run */
    bool thread_only;   /* one thread's own filter (no TSYNC): the agent's are as at attach */
    uint32_t allowed;   /* HI_GATE_* groups found allowed */
    unsigned restored;  /* slots put back through /proc/PID/mem */
    char why[700];      /* what cannot be done, and which call the filter refuses */
};

/* Looks at pid's profiler: when a filter came after attach (the agent
 * sealed itself, or will at its next look, within 2 s), runs the filters
 * over the agent's calls once per new filter, writes the verdict, and
 * puts the slots back from outside unless the agent can. r->sealed false:
 * nothing to do (also when no profiler is there). 0 or -errno. */
int cli_gate_settle(pid_t pid, struct cli_gate_result *r);

/* Whether the agent may answer requests after r's verdict. */
static inline bool cli_gate_serves(const struct cli_gate_result *r)
{
    return !r->sealed || (r->allowed & HI_GATE_SERVE) != 0;
}

/* The result of the last cli_gate_settle of this process (commands that
 * say at their end what could not be done). */
const struct cli_gate_result *cli_gate_last(void);

/* Says on stderr what the last settle found could not be done, if a
 * filter came after attach; returns CLI_EXIT_UNSUPPORTED (5) then, else
 * code. */
int cli_gate_say(pid_t pid);
int cli_gate_exit(pid_t pid, int code);

#endif /* HI_CLI_PROCESS_SECCOMP_GATE_H */
