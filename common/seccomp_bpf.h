/* seccomp_bpf.h - what one seccomp filter answers to one system call,
 * found by running it (classic BPF) as the kernel would. */
#ifndef HI_COMMON_SECCOMP_BPF_H
#define HI_COMMON_SECCOMP_BPF_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest filter the kernel accepts (BPF_MAXINSNS). */
#define HI_SECCOMP_MAX_INSNS 4096

/* Runs one filter of len instructions over d as the kernel would, and
 * returns its SECCOMP_RET_* value. Whatever cannot be vouched for yields
 * SECCOMP_RET_KILL_PROCESS (the most restrictive action): an instruction
 * seccomp does not accept, a load outside struct seccomp_data or of scratch
 * memory never stored, a jump out of the program, running past its end, a
 * division by a zero X or a shift by 32 or more, and any load of
 * instruction_pointer (we do not know the address the real call comes
 * from, so its answer would be a guess). */
uint32_t hi_seccomp_eval(const struct sock_filter *prog, size_t len, const struct seccomp_data *d);

/* The action the kernel takes when two filters answer a and b: the one
 * with the lower precedence value (SECCOMP_RET_ACTION_FULL as a signed
 * number: KILL_PROCESS < KILL_THREAD < TRAP < ERRNO < USER_NOTIF < TRACE <
 * LOG < ALLOW). */
uint32_t hi_seccomp_combine(uint32_t a, uint32_t b);

/* Whether the call runs unhindered: ALLOW or LOG. */
bool hi_seccomp_allows(uint32_t action);

#endif /* HI_COMMON_SECCOMP_BPF_H */
