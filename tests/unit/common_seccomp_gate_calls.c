/* Unit tests for common/seccomp_gate_calls.c: what one filter allows of
 * the sealed agent's calls, as the payload judges a TSYNC filter a thread
 * installs through a slot of ours (its verdict written before a cli
 * comes). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "common/seccomp_gate_calls.h"

#define N(f) (sizeof(f) / sizeof((f)[0]))
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define KILL_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

Test(gate_calls, every_group_has_calls)
{
    uint32_t seen = 0;
    for (size_t i = 0; i < hi_gate_ncalls; i++) {
        cr_expect_eq(__builtin_popcount(hi_gate_calls[i].group), 1, "call %zu has one group", i);
        seen |= hi_gate_calls[i].group;
    }
    cr_expect_eq(seen, HI_GATE_ALL_GROUPS);
    cr_expect_eq(__builtin_popcount(HI_GATE_ALL_GROUPS), HI_GATE_NGROUPS);
}

Test(gate_calls, allow_all)
{
    struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    cr_expect_eq(hi_gate_groups_allowed(f, N(f), NULL, NULL), HI_GATE_ALL_GROUPS);
    struct sock_filter log[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG) };
    cr_expect_eq(hi_gate_groups_allowed(log, N(log), NULL, NULL), HI_GATE_ALL_GROUPS);
}

/* rel_seccomp_prefilter's case 2: poll and openat killed. A futex wait
 * and pause(2) stay, so the agent can sleep; it can neither serve nor
 * read /proc. */
Test(gate_calls, poll_and_openat_killed)
{
    struct sock_filter f[] = {
        LD(nr), KILL_NR(__NR_poll), KILL_NR(__NR_openat), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    int8_t bad[HI_GATE_NGROUPS];
    uint32_t act[HI_GATE_NGROUPS];
    uint32_t g = hi_gate_groups_allowed(f, N(f), bad, act);
    cr_expect_eq(g, HI_GATE_MPROTECT | HI_GATE_LEAVE | HI_GATE_SLEEP_FUTEX | HI_GATE_SLEEP_PAUSE, "groups %#x", g);
    /* What the cli's message names: each refused group's first call. */
    int park = __builtin_ctz(HI_GATE_PARK), proc = __builtin_ctz(HI_GATE_PROC), leave = __builtin_ctz(HI_GATE_LEAVE);
    cr_assert_geq(bad[park], 0);
    cr_expect_str_eq(hi_gate_calls[bad[park]].name, "poll");
    cr_assert_geq(bad[proc], 0);
    cr_expect_str_eq(hi_gate_calls[bad[proc]].name, "openat");
    cr_expect_eq(act[proc], SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(bad[leave], -1);
}

/* Arguments count: a futex call refused only when it compares with 0
 * (args[2]: the word the sleep waits on, never woken) takes SLEEP_FUTEX
 * away, not SERVE's futex calls (val 1). */
Test(gate_calls, futex_without_timeout)
{
    struct sock_filter f[] = {
        LD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 0, 3),
        LD(args[2]),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    uint32_t g = hi_gate_groups_allowed(f, N(f), NULL, NULL);
    cr_expect_eq(g, HI_GATE_ALL_GROUPS & ~HI_GATE_SLEEP_FUTEX, "groups %#x", g);
}

/* What cannot be vouched for allows nothing: a filter that reads the
 * instruction pointer (we do not know where the agent's calls come
 * from), one that runs off its end, an empty one. */
Test(gate_calls, unknowable_allows_nothing)
{
    struct sock_filter ip[] = {
        LD(instruction_pointer), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    cr_expect_eq(hi_gate_groups_allowed(ip, N(ip), NULL, NULL), 0u);
    struct sock_filter off_end[] = { LD(nr) };
    cr_expect_eq(hi_gate_groups_allowed(off_end, N(off_end), NULL, NULL), 0u);
    cr_expect_eq(hi_gate_groups_allowed(NULL, 0, NULL, NULL), 0u);
}
