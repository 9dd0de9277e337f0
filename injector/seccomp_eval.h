/* seccomp_eval.h - what a thread's seccomp filters answer to one system
 * call, found by reading them with ptrace and running them here
 * (common/seccomp_bpf.h) rather than in the target. */
#ifndef HI_INJECTOR_SECCOMP_EVAL_H
#define HI_INJECTOR_SECCOMP_EVAL_H

#include <stdint.h>
#include <sys/types.h>

#include "common/seccomp_bpf.h"
#include "common/seccomp_gate_calls.h"

/* Reads every filter of the ptrace-stopped thread tid
 * (PTRACE_SECCOMP_GET_FILTER, most recent first, until ENOENT) and
 * evaluates each over d; *action receives the combined action. Returns 0,
 * -ENOENT when the thread has no filter at all, or the -errno of the read:
 * -EINVAL (not in filter mode, or no CONFIG_CHECKPOINT_RESTORE), -EACCES
 * (no CAP_SYS_ADMIN), -EMEDIUMTYPE (a filter attached with a tracer's
 * help), ... in which case the caller knows nothing. */
int inj_seccomp_thread_action(pid_t tid, const struct seccomp_data *d, uint32_t *action);

/* The groups of the agent's calls (common/seccomp_gate_calls.h) all of
 * whose calls the ptrace-stopped thread tid's filters allow, into
 * *allowed; for each group refused, the index in hi_gate_calls of its
 * first refused call (else -1) and the action it got. 0 or the -errno of
 * inj_seccomp_thread_action (then the caller knows nothing). */
int inj_seccomp_gate_eval(pid_t tid, uint32_t *allowed, int first_bad[HI_GATE_NGROUPS],
                          uint32_t actions[HI_GATE_NGROUPS]);

#endif /* HI_INJECTOR_SECCOMP_EVAL_H */
