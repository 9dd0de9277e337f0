/* stack.h - call stack capture for sampled allocations.
 *
 * Raw program counters (return addresses), innermost first. The payload's
 * own frames (hook, sampler) are dropped from the top, so frame 0 is the
 * return address into the code that called the allocator.
 *
 * Two unwinders give the same answer: the cached CFI walk (cfi.h: each
 * frame is a cache lookup and two loads, every read bounded by the span
 * of the thread's stack, learnt once per thread) and, for any stack it
 * cannot walk to the end, libunwind's unw_backtrace (DWARF-driven too,
 * several times slower). A stack is walked wholly by one of them.
 *
 * Frame pointers: there is no separate blind rbp-chain walk, on purpose.
 * The CFI walk already follows rbp for every frame whose rule says
 * CFA = rbp + 16 (PL_CFI_FP: two loads, exactly a frame-pointer step),
 * and the rule is what tells a frame-pointer frame from one where rbp is
 * just another register (glibc and most distribution code are built
 * without frame pointers): a blind walk would turn such a frame into a
 * plausible but wrong stack, with nothing to tell. The rule costs one
 * cached cache-line lookup a frame (bench: about 4 ns a frame, ~160 ns a
 * whole sample at the default rate), so a blind walk would save little
 * and could record wrong stacks.
 */
#ifndef HI_PAYLOAD_STACK_H
#define HI_PAYLOAD_STACK_H

#include <stdint.h>

#include "common/proto.h"

/* Records the address ranges whose frames are dropped (payload, libunwind).
 * Call once before the first capture; 0 or -errno. */
int pl_stack_init(void);

/* Captures up to `max` (<= HI_MAX_FRAMES) PCs of the calling thread into
 * pcs. Returns the number captured. Caller holds the reentrancy guard. */
uint32_t pl_stack_capture(uintptr_t *pcs, uint32_t max);

/* The two unwinders alone (tests): the CFI walk returns -1 where
 * pl_stack_capture would use libunwind. */
int pl_stack_capture_cfi(uintptr_t *pcs, uint32_t max);
uint32_t pl_stack_capture_unwind(uintptr_t *pcs, uint32_t max);

/* Hash of a stack (never 0). */
uint64_t pl_stack_hash(const uintptr_t *pcs, uint32_t n);

/* True when pc lies in the payload's own code. */
int pl_stack_in_payload(uintptr_t pc);

#endif /* HI_PAYLOAD_STACK_H */
