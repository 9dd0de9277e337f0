/* stack.h - call stack capture for sampled allocations.
 *
 * Raw program counters (return addresses), innermost first. The payload's
 * own frames (hook, sampler) are dropped from the top, so frame 0 is the
 * return address into the code that called the allocator.
 *
 * One unwinder: the cached CFI walk (cfi.h: each frame is a cache lookup
 * and two loads). Reads inside the thread's stack span (learnt by the
 * thread's first complete walk) are direct; any other read (the first
 * walk, a deeper one, a signal handler on an alternate stack) is checked
 * by the kernel first, so a wrong rule gives a wrong stack, never a fault.
 * Signal frames are stepped with the registers the kernel saved. A frame
 * with no usable rule (no CFI: JIT code, hand-written assembly; a DWARF
 * expression) is stepped by libunwind's frame-chain guess (rbp a little
 * above the frame); when that does not hold either, the stack ends there,
 * recorded up to there and counted in pl_stack_truncated. That is what
 * libunwind did for such stacks, without loading it and liblzma into the
 * target (issue 17: ~10 ms of the first attach, and its pipe).
 *
 * Frame pointers: there is no separate blind rbp-chain walk, on purpose.
 * The CFI walk already follows rbp for every frame whose rule says
 * CFA = rbp + 16 (PL_CFI_FP: two loads, exactly a frame-pointer step),
 * and the rule is what tells a frame-pointer frame from one where rbp is
 * just another register (glibc and most distribution code are built
 * without frame pointers): a blind walk would turn such a frame into a
 * plausible but wrong stack, with nothing to tell. The rule costs one
 * cached cache-line lookup a frame (about 23 instructions a frame with
 * the step, callgrind; 3.2 ns a frame at RATE=1, bench), so a blind walk
 * would save little and could record wrong stacks.
 */
#ifndef HI_PAYLOAD_STACK_H
#define HI_PAYLOAD_STACK_H

#include <stdint.h>

#include "common/proto.h"

/* Records the payload's own code range, whose frames are dropped. Call
 * once before the first capture; 0 or -errno. */
int pl_stack_init(void);

/* Captures up to `max` (<= HI_MAX_FRAMES) PCs of the calling thread into
 * pcs. Returns the number captured. Caller holds the reentrancy guard. */
uint32_t pl_stack_capture(uintptr_t *pcs, uint32_t max);

/* The same, every frame stepped by its CFI rule, the payload's own
 * included: for a caller whose frame the frame-pointer chain would skip
 * (a hook without a frame pointer that did not tail-call, hooks.c). */
uint32_t pl_stack_capture_unwind(uintptr_t *pcs, uint32_t max);

/* Walks that ended at a frame they could not step (no rule, an unreadable
 * address): their stacks are right but shorter. */
extern uint64_t pl_stack_truncated;

/* Hash of a stack (never 0). */
uint64_t pl_stack_hash(const uintptr_t *pcs, uint32_t n);

/* True when pc lies in the payload's own code. */
int pl_stack_in_payload(uintptr_t pc);

#endif /* HI_PAYLOAD_STACK_H */
