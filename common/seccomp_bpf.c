/* seccomp_bpf.c - one seccomp filter (classic BPF) run over one system
 * call, as the kernel runs it. Shared: the injector and the cli run the
 * filters they read with ptrace (injector/seccomp_eval.c), the payload a
 * filter a thread is about to install through a slot of ours
 * (payload/interpose/hooks_sandbox.c). Only the instructions
 * seccomp_check_filter() accepts are known (kernel/seccomp.c); everything
 * else, and every case the kernel would have refused at load time,
 * answers KILL_PROCESS: an error here makes us refuse more, never call
 * what a filter kills. Memory only, no allocation, no system call. */
#include "common/seccomp_bpf.h"

#include <string.h>

#define DENY SECCOMP_RET_KILL_PROCESS

/* Offsets in struct seccomp_data of what we refuse to guess. */
#define IP_OFF 8u
#define IP_END 16u

static bool load_word(const struct seccomp_data *d, uint32_t k, uint32_t *v)
{
    if (k >= sizeof(*d) || (k & 3) || (k >= IP_OFF && k < IP_END))
        return false;
    memcpy(v, (const unsigned char *)d + k, 4);
    return true;
}

static bool alu(uint16_t op, uint32_t *a, uint32_t v)
{
    switch (op) {
    case BPF_ADD: *a += v; return true;
    case BPF_SUB: *a -= v; return true;
    case BPF_MUL: *a *= v; return true;
    case BPF_DIV: if (!v) return false; *a /= v; return true;
    case BPF_MOD: if (!v) return false; *a %= v; return true;
    case BPF_OR:  *a |= v; return true;
    case BPF_AND: *a &= v; return true;
    case BPF_XOR: *a ^= v; return true;
    case BPF_LSH: if (v >= 32) return false; *a <<= v; return true;
    case BPF_RSH: if (v >= 32) return false; *a >>= v; return true;
    case BPF_NEG: *a = -*a; return true;
    default: return false;
    }
}

uint32_t hi_seccomp_eval(const struct sock_filter *prog, size_t len, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS], v;
    unsigned stored = 0; /* bit i: mem[i] was written */

    if (!prog || len == 0 || len > HI_SECCOMP_MAX_INSNS)
        return DENY;
    /* Every jump goes forward, so this loop ends within len steps. */
    for (size_t pc = 0; pc < len; pc++) {
        const struct sock_filter *i = &prog[pc];
        uint32_t k = i->k;
        size_t to;

        switch (i->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (!load_word(d, k, &a))
                return DENY;
            break;
        case BPF_LD | BPF_W | BPF_LEN:
            a = sizeof(*d);
            break;
        case BPF_LDX | BPF_W | BPF_LEN:
            x = sizeof(*d);
            break;
        case BPF_LD | BPF_IMM:
            a = k;
            break;
        case BPF_LDX | BPF_IMM:
            x = k;
            break;
        case BPF_MISC | BPF_TAX:
            x = a;
            break;
        case BPF_MISC | BPF_TXA:
            a = x;
            break;
        case BPF_LD | BPF_MEM:
        case BPF_LDX | BPF_MEM:
            if (k >= BPF_MEMWORDS || !(stored & (1u << k)))
                return DENY;
            if (BPF_CLASS(i->code) == BPF_LD)
                a = mem[k];
            else
                x = mem[k];
            break;
        case BPF_ST:
        case BPF_STX:
            if (k >= BPF_MEMWORDS)
                return DENY;
            mem[k] = i->code == BPF_ST ? a : x;
            stored |= 1u << k;
            break;
        case BPF_ALU | BPF_ADD | BPF_K: case BPF_ALU | BPF_ADD | BPF_X:
        case BPF_ALU | BPF_SUB | BPF_K: case BPF_ALU | BPF_SUB | BPF_X:
        case BPF_ALU | BPF_MUL | BPF_K: case BPF_ALU | BPF_MUL | BPF_X:
        case BPF_ALU | BPF_DIV | BPF_K: case BPF_ALU | BPF_DIV | BPF_X:
        case BPF_ALU | BPF_MOD | BPF_K: case BPF_ALU | BPF_MOD | BPF_X:
        case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X:
        case BPF_ALU | BPF_OR | BPF_K:  case BPF_ALU | BPF_OR | BPF_X:
        case BPF_ALU | BPF_XOR | BPF_K: case BPF_ALU | BPF_XOR | BPF_X:
        case BPF_ALU | BPF_LSH | BPF_K: case BPF_ALU | BPF_LSH | BPF_X:
        case BPF_ALU | BPF_RSH | BPF_K: case BPF_ALU | BPF_RSH | BPF_X:
        case BPF_ALU | BPF_NEG:
            if (!alu(BPF_OP(i->code), &a, BPF_SRC(i->code) == BPF_X ? x : k))
                return DENY;
            break;
        case BPF_JMP | BPF_JA:
            if (k >= len - pc - 1)
                return DENY;
            pc += k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JEQ | BPF_X:
        case BPF_JMP | BPF_JGT | BPF_K: case BPF_JMP | BPF_JGT | BPF_X:
        case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JGE | BPF_X:
        case BPF_JMP | BPF_JSET | BPF_K: case BPF_JMP | BPF_JSET | BPF_X: {
            bool yes;

            v = BPF_SRC(i->code) == BPF_X ? x : k;
            switch (BPF_OP(i->code)) {
            case BPF_JEQ: yes = a == v; break;
            case BPF_JGT: yes = a > v; break;
            case BPF_JGE: yes = a >= v; break;
            default:      yes = (a & v) != 0; break;
            }
            /* Both targets must lie inside, as the kernel's check demands. */
            if (pc + 1 + i->jt >= len || pc + 1 + i->jf >= len)
                return DENY;
            to = pc + (yes ? i->jt : i->jf);
            pc = to;
            break;
        }
        case BPF_RET | BPF_K:
            return k;
        case BPF_RET | BPF_A:
            return a;
        default:
            return DENY;
        }
    }
    return DENY; /* ran past the end */
}

uint32_t hi_seccomp_combine(uint32_t a, uint32_t b)
{
    /* kernel/seccomp.c ACTION_ONLY(): the full action as a signed number. */
    return (int32_t)(b & SECCOMP_RET_ACTION_FULL) < (int32_t)(a & SECCOMP_RET_ACTION_FULL) ? b : a;
}

bool hi_seccomp_allows(uint32_t action)
{
    uint32_t act = action & SECCOMP_RET_ACTION_FULL;

    return act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG;
}

