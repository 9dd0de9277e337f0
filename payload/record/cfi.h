/* cfi.h - how to step from one x86-64 frame to its caller, compiled from
 * the module's .eh_frame once per return address and cached.
 *
 * A general DWARF unwinder (libunwind's unw_backtrace) costs about 100
 * instructions a frame plus 200 a call; a sample must cost well under
 * 100 ns. Nearly every frame a
 * compiler makes is one of two shapes at a call site:
 *   FP  CFA = rbp + 16, caller's rbp saved at CFA - 16
 *   SP  CFA = rsp + n,  caller's rbp unchanged or saved at CFA - 8k
 * (return address at CFA - 8 in both), and the outermost frames (_start,
 * clone3) mark the return address undefined: END. pl_cfi_rule answers
 * which, from a lock-free cache of one 64-bit word per return address; a
 * miss reads the CFI inside dl_iterate_phdr (the module cannot be unloaded
 * meanwhile), exactly as libunwind's local unwinder does. The kernel's
 * signal trampoline (an 'S' CIE whose code is rt_sigreturn) is
 * PL_CFI_SIGNAL: the caller reads the interrupted registers from the
 * ucontext the kernel saved. Anything else (DWARF expressions, a CFA in
 * another register, no CFI at all) is PL_CFI_OTHER: the stack ends there.
 */
#ifndef HI_PAYLOAD_CFI_H
#define HI_PAYLOAD_CFI_H

#include <stdint.h>

enum pl_cfi_kind {
    PL_CFI_OTHER = 0, /* not one of the shapes below: the stack ends here */
    PL_CFI_FP = 1,
    PL_CFI_SP = 2,
    PL_CFI_END = 3,
    PL_CFI_SIGNAL = 4, /* the signal trampoline; as a word: OTHER with PL_CFI_SIGNAL_MARK */
};

/* A rule: kind, and for PL_CFI_SP the CFA offset from rsp and where rbp
 * was saved (0: unchanged). */
struct pl_cfi_rule {
    unsigned kind;
    uint32_t cfa_off;   /* PL_CFI_SP: CFA = rsp + cfa_off */
    uint32_t rbp_slot;  /* PL_CFI_SP: caller's rbp at CFA - 8 * rbp_slot; 0 = unchanged */
};

/* The cache holds rules as words: ra (47 bits; x86-64 user space is
 * below 2^47) | kind << 47 | cfa_off/8 << 49 (10 bits) | rbp_slot << 59
 * (5 bits). 2^PL_CFI_BITS words in lines of PL_CFI_WAYS (one cache line
 * per lookup); 0 is an empty word. */
#define PL_CFI_BITS 16
#define PL_CFI_WAYS 8u
#define PL_CFI_RA_MASK ((1ull << 47) - 1)
#define PL_CFI_KIND(w) ((unsigned)((w) >> 47) & 3u)
#define PL_CFI_OFF(w) ((uint32_t)((w) >> 49 & 1023u) * 8u)
#define PL_CFI_SLOT(w) ((uint32_t)((w) >> 59))
/* A signal frame's word: kind OTHER (the two kind bits are all taken) with
 * 1 in the offset field, which OTHER never uses. */
#define PL_CFI_SIGNAL_MARK (1ull << 49)
#define PL_CFI_IS_SIGNAL(w) (((w) >> 47 & 0x7ffull) == (PL_CFI_SIGNAL_MARK >> 47))

extern uint64_t *pl_cfi_cache; /* set once by pl_cfi_init, before any hook runs */

/* Computes the rule for ra from the CFI and caches it; its word. Caller
 * holds the reentrancy guard (calls dl_iterate_phdr). */
uint64_t pl_cfi_miss(uintptr_t ra);

/* The lookup both entry points below share: ra's line of the cache c,
 * then the CFI on a miss. */
static inline uint64_t pl_cfi_lookup(const uint64_t *c, uintptr_t ra)
{
    const uint64_t *line = &c[(((uint64_t)ra * 0x9E3779B97F4A7C15ull) >> (64 - PL_CFI_BITS + 3)) * PL_CFI_WAYS];
    for (unsigned i = 0; i < PL_CFI_WAYS; i++) {
        uint64_t w = __atomic_load_n(&line[i], __ATOMIC_RELAXED);
        if ((w & PL_CFI_RA_MASK) == ra)
            return w;
        if (w == 0)
            break;
    }
    return pl_cfi_miss(ra);
}

/* The rule word for the frame whose return address is ra: a lookup in one
 * cache line, the CFI on a miss. Lock-free; safe from any thread. Words
 * are stored and loaded whole, so a reader sees a complete rule or none. */
static inline uint64_t pl_cfi_word(uintptr_t ra)
{
    const uint64_t *c = pl_cfi_cache;
    if (__builtin_expect(c != 0 && ra - 1 < PL_CFI_RA_MASK, 1))
        return pl_cfi_lookup(c, ra);
    return pl_cfi_miss(ra);
}

/* pl_cfi_word for a walk that knows the cache is mapped (pl_stack_init
 * succeeded) and ra >= 0x4000: no checks before the lookup. An ra above
 * user space matches no word (its bits above 47 are not 0) and goes to
 * pl_cfi_miss, which knows what to do with it. */
static inline uint64_t pl_cfi_word_walk(uintptr_t ra)
{
    return pl_cfi_lookup(pl_cfi_cache, ra);
}

/* The rule for return address ra, decoded (through the cache). */
void pl_cfi_rule(uintptr_t ra, struct pl_cfi_rule *out);

/* Computes the rule from the CFI without the cache (tests, diagnostics). */
void pl_cfi_rule_uncached(uintptr_t ra, struct pl_cfi_rule *out);

/* Forgets every cached rule (modules were unloaded: their addresses may
 * be reused by code with other rules). */
void pl_cfi_flush(void);

/* Maps the cache once. 0 or -ENOMEM. */
int pl_cfi_init(void);

#endif /* HI_PAYLOAD_CFI_H */
