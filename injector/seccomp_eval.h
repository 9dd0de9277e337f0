/* seccomp_eval.h - what a thread's seccomp filters answer to one system
 * call, found by running them (classic BPF) here rather than in the target. */
#ifndef HI_INJECTOR_SECCOMP_EVAL_H
#define HI_INJECTOR_SECCOMP_EVAL_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest filter the kernel accepts (BPF_MAXINSNS). */
#define INJ_SECCOMP_MAX_INSNS 4096

/* Runs one filter of len instructions over d as the kernel would, and
 * returns its SECCOMP_RET_* value. Whatever cannot be vouched for yields
 * SECCOMP_RET_KILL_PROCESS (the most restrictive action): an instruction
 * seccomp does not accept, a load outside struct seccomp_data or of scratch
 * memory never stored, a jump out of the program, running past its end, a
 * division by a zero X or a shift by 32 or more, and any load of
 * instruction_pointer (we do not know the address the real call comes
 * from, so its answer would be a guess). */
uint32_t inj_seccomp_eval(const struct sock_filter *prog, size_t len,
                          const struct seccomp_data *d);

/* The action the kernel takes when two filters answer a and b: the one
 * with the lower precedence value (SECCOMP_RET_ACTION_FULL as a signed
 * number: KILL_PROCESS < KILL_THREAD < TRAP < ERRNO < USER_NOTIF < TRACE <
 * LOG < ALLOW). */
uint32_t inj_seccomp_combine(uint32_t a, uint32_t b);

/* Whether the call runs unhindered: ALLOW or LOG. */
bool inj_seccomp_allows(uint32_t action);

/* Reads every filter of the ptrace-stopped thread tid
 * (PTRACE_SECCOMP_GET_FILTER, most recent first, until ENOENT) and
 * evaluates each over d; *action receives the combined action. Returns 0,
 * -ENOENT when the thread has no filter at all, or the -errno of the read:
 * -EINVAL (not in filter mode, or no CONFIG_CHECKPOINT_RESTORE), -EACCES
 * (no CAP_SYS_ADMIN), -EMEDIUMTYPE (a filter attached with a tracer's
 * help), ... in which case the caller knows nothing. */
int inj_seccomp_thread_action(pid_t tid, const struct seccomp_data *d, uint32_t *action);

#endif /* HI_INJECTOR_SECCOMP_EVAL_H */
