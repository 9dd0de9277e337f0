/* cfi.h - how to step from one x86-64 frame to its caller, compiled from
 * the module's .eh_frame once per return address and cached.
 *
 * libunwind's unw_backtrace costs about 100 instructions a frame plus 200
 * a call; a sample must cost well under 250 ns. Nearly every frame a
 * compiler makes is one of two shapes at a call site:
 *   FP  CFA = rbp + 16, caller's rbp saved at CFA - 16
 *   SP  CFA = rsp + n,  caller's rbp unchanged or saved at CFA - 8k
 * (return address at CFA - 8 in both), and the outermost frames (_start,
 * clone3) mark the return address undefined: END. pl_cfi_rule answers
 * which, from a lock-free cache of one 64-bit word per return address; a
 * miss reads the CFI inside dl_iterate_phdr (the module cannot be unloaded
 * meanwhile), exactly as libunwind's local unwinder does. Anything else
 * (signal frames, DWARF expressions, a CFA in another register, no CFI at
 * all) is PL_CFI_OTHER: the caller uses libunwind for that stack.
 */
#ifndef HI_PAYLOAD_CFI_H
#define HI_PAYLOAD_CFI_H

#include <stdint.h>

enum pl_cfi_kind {
    PL_CFI_OTHER = 0, /* not one of the shapes below: use libunwind */
    PL_CFI_FP = 1,
    PL_CFI_SP = 2,
    PL_CFI_END = 3,
};

/* A rule: kind, and for PL_CFI_SP the CFA offset from rsp and where rbp
 * was saved (0: unchanged). */
struct pl_cfi_rule {
    unsigned kind;
    uint32_t cfa_off;   /* PL_CFI_SP: CFA = rsp + cfa_off */
    uint32_t rbp_slot;  /* PL_CFI_SP: caller's rbp at CFA - 8 * rbp_slot; 0 = unchanged */
};

/* The rule for the frame whose return address (or, for the innermost
 * frame, resume address) is ra. Caller holds the reentrancy guard (a miss
 * calls dl_iterate_phdr). Lock-free; safe from any thread. */
void pl_cfi_rule(uintptr_t ra, struct pl_cfi_rule *out);

/* Computes the rule from the CFI without the cache (tests, diagnostics). */
void pl_cfi_rule_uncached(uintptr_t ra, struct pl_cfi_rule *out);

/* Forgets every cached rule (modules were unloaded: their addresses may
 * be reused by code with other rules). */
void pl_cfi_flush(void);

/* Maps the cache once. 0 or -ENOMEM. */
int pl_cfi_init(void);

#endif /* HI_PAYLOAD_CFI_H */
