/* Unit tests for common/seccomp_bpf.c (the classic-BPF run of one filter,
 * as the injector and the payload use it): hand-written filters run over
 * munmap(page, len) as the rescue page's self-unmapping stub issues it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/seccomp_bpf.h"

#define N(f) (sizeof(f) / sizeof((f)[0]))
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

static struct seccomp_data munmap_data(void)
{
    struct seccomp_data d = {
        .nr = __NR_munmap,
        .arch = AUDIT_ARCH_X86_64,
        .instruction_pointer = 0,
        .args = { 0x1000000000ull, 69632 },
    };
    return d;
}

Test(seccomp_eval, allow_all)
{
    struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    struct seccomp_data d = munmap_data();

    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_ALLOW);
    cr_expect(hi_seccomp_allows(hi_seccomp_eval(f, N(f), &d)));
}

Test(seccomp_eval, deny_munmap_by_nr)
{
    struct sock_filter f[] = {
        LD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct seccomp_data d = munmap_data();

    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_ERRNO | EPERM);
    cr_expect_not(hi_seccomp_allows(hi_seccomp_eval(f, N(f), &d)));
    d.nr = __NR_uname; /* the same filter lets anything else through */
    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_ALLOW);
}

Test(seccomp_eval, deny_by_arch)
{
    /* The usual prologue: another architecture is killed. */
    struct sock_filter f[] = {
        LD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct seccomp_data d = munmap_data();

    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_ALLOW);
    d.arch = AUDIT_ARCH_I386;
    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_KILL_PROCESS);
}

Test(seccomp_eval, jset_alu_scratch)
{
    /* munmap whose address has bit 44 set (high word & 0x1000) and whose
     * length, times 2 through X and scratch memory, is above 100000: trap;
     * anything else: log. */
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x10, 0, 6),
        LD(args[1]),
        BPF_STMT(BPF_ST, 3),
        BPF_STMT(BPF_LDX | BPF_MEM, 3),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 100000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
    };
    struct seccomp_data d = munmap_data();

    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_TRAP);
    d.args[1] = 4096;
    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_LOG);
    cr_expect(hi_seccomp_allows(SECCOMP_RET_LOG));
    d.args[1] = 69632;
    d.args[0] = 0x7f0000000000ull; /* bit 44 clear */
    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), SECCOMP_RET_LOG);
}

Test(seccomp_eval, alu_ops_and_ret_a)
{
    /* A = ((nr * 3 - 1) ^ 0xff) >> 1, | 0x7fff0000 when that is 0x7b. */
    struct sock_filter f[] = {
        LD(nr),
        BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3),
        BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
        BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0xff),
        BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 1),
        BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_LD | BPF_IMM, 0x7fff0000),
        BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct seccomp_data d = munmap_data(); /* nr 11: 32 ^ 0xff = 0xdf, >> 1 = 0x6f */

    cr_expect_eq(hi_seccomp_eval(f, N(f), &d), 0x7fff006f);
    cr_expect(hi_seccomp_allows(0x7fff006f)); /* ALLOW, data ignored */
}

Test(seccomp_eval, malformed)
{
    struct sock_filter jump_out[] = {
        LD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_uname, 0, 5), /* munmap: out */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter ja_out[] = {
        BPF_STMT(BPF_JMP | BPF_JA, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter past_end[] = { LD(nr) };
    struct sock_filter unknown[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), /* seccomp takes words only */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter bad_load[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter unset_mem[] = {
        BPF_STMT(BPF_LD | BPF_MEM, 2),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter div_zero[] = {
        BPF_STMT(BPF_LDX | BPF_IMM, 0),
        BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct seccomp_data d = munmap_data();

    cr_expect_eq(hi_seccomp_eval(jump_out, N(jump_out), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(ja_out, N(ja_out), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(past_end, N(past_end), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(unknown, N(unknown), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(bad_load, N(bad_load), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(unset_mem, N(unset_mem), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(div_zero, N(div_zero), &d), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(hi_seccomp_eval(NULL, 0, &d), SECCOMP_RET_KILL_PROCESS);
}

Test(seccomp_eval, reads_instruction_pointer)
{
    /* Allows only calls from one address range: we cannot tell. */
    struct sock_filter f[] = {
        LD(instruction_pointer),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter high[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct seccomp_data d = munmap_data();

    cr_expect_not(hi_seccomp_allows(hi_seccomp_eval(f, N(f), &d)));
    cr_expect_not(hi_seccomp_allows(hi_seccomp_eval(high, N(high), &d)));
}

Test(seccomp_eval, combine_most_restrictive)
{
    uint32_t order[] = { SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP,
                         SECCOMP_RET_ERRNO | 1, SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE | 7,
                         SECCOMP_RET_LOG, SECCOMP_RET_ALLOW };

    for (size_t i = 0; i < N(order); i++)
        for (size_t j = 0; j < N(order); j++)
            cr_expect_eq(hi_seccomp_combine(order[i], order[j]), order[i < j ? i : j],
                         "combine(%#x, %#x)", order[i], order[j]);
    for (size_t i = 0; i + 2 < N(order); i++)
        cr_expect_not(hi_seccomp_allows(order[i]), "%#x", order[i]);
}
