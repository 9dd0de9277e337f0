/* seccomp_gate_calls.h - every system call the agent makes once sealed,
 * by group (common/seccomp_gate.h HI_GATE_*), with the arguments a filter
 * might test: what a verdict is about. One list for the cli (which runs
 * the filters it reads with ptrace over it, cli/process/seccomp_gate.c),
 * the injector (the filters in force at attach, passed to the agent as
 * config "gate") and the payload (a filter a thread is about to install
 * through a slot of ours, payload/interpose/hooks_sandbox.c). */
#ifndef HI_COMMON_SECCOMP_GATE_CALLS_H
#define HI_COMMON_SECCOMP_GATE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/seccomp_bpf.h"
#include "common/seccomp_gate.h"

struct hi_gate_call {
    uint32_t group; /* one HI_GATE_* bit */
    long nr;
    const char *name;
    uint64_t args[6];
};

extern const struct hi_gate_call hi_gate_calls[];
extern const size_t hi_gate_ncalls;

#define HI_GATE_ALL_GROUPS                                                                                  \
    (HI_GATE_PARK | HI_GATE_SERVE | HI_GATE_PROC | HI_GATE_MPROTECT | HI_GATE_LEAVE | HI_GATE_SLEEP_FUTEX | \
     HI_GATE_SLEEP_PAUSE)
#define HI_GATE_NGROUPS 7

/* The groups all of whose calls the one filter prog (len instructions)
 * allows (ALLOW or LOG); for each group refused, the index of its first
 * refused call in hi_gate_calls into first_bad (else -1) and the action
 * it got into actions (both may be NULL). Memory only. */
uint32_t hi_gate_groups_allowed(const struct sock_filter *prog, size_t len, int8_t first_bad[HI_GATE_NGROUPS],
                                uint32_t actions[HI_GATE_NGROUPS]);

#endif /* HI_COMMON_SECCOMP_GATE_CALLS_H */
