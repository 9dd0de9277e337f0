/* stack.c - call stacks: the cached CFI walk, every read inside the
 * thread's known stack or checked by the kernel first. */
#include "payload/record/record.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "payload/python/python.h"
#include "payload/record/stack_span.h"
#include "payload/sys/sys.h"

struct pl_range {
    uintptr_t lo, hi;
};

/* Written once by pl_stack_init (start lock), read by the sampled path. */
static struct pl_range pl_payload_text;

uint64_t pl_stack_truncated;

struct range_arg {
    uintptr_t inside;
    struct pl_range *out;
};

/* dl_iterate_phdr callback: the executable segments' span of the module
 * containing arg->inside. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct range_arg *a = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int contains = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (a->inside >= s && a->inside < e)
            contains = 1;
        if (ph->p_flags & PF_X) {
            if (s < lo)
                lo = s;
            if (e > hi)
                hi = e;
        }
    }
    if (!contains)
        return 0;
    a->out->lo = lo;
    a->out->hi = hi;
    return 1;
}

static int pl_stack_fast; /* the cache could be mapped: walk with it */

int pl_stack_init(void)
{
    pl_stack_fast = pl_cfi_init() == 0;
    pl_stack_span_init();
    pl_py_sample_init(); /* a CPython's frames join the stacks (issue 29) */
    struct range_arg a = { (uintptr_t)&pl_stack_init, &pl_payload_text };
    if (!dl_iterate_phdr(find_text, &a))
        return -ENOENT;
    return 0;
}

int pl_stack_in_payload(uintptr_t pc)
{
    return pc >= pl_payload_text.lo && pc < pl_payload_text.hi;
}

/* ---- reads ---- */

/* One walk's view of memory: [lo, hi - 8] is this thread's stack from
 * the walk's first frame up (learnt before), read directly; any other
 * word is read only after the kernel said it is readable. */
struct walk {
    uintptr_t lo, hi;
    uint32_t probes;   /* reads checked by the kernel */
    uint8_t crossed;   /* a signal frame was stepped through */
    uint8_t complete;  /* reached the outermost frame */
    uint8_t truncated; /* ended at a frame it cannot step */
    uint8_t guessed;   /* stepped a frame with no rule by its frame pointer */
};

static inline int load(struct walk *w, uintptr_t a, uintptr_t *v)
{
    /* hi - a, not a <= hi - 8: with no span known (lo = hi = 0) hi - 8
     * wrapped and every read went unchecked. */
    if (__builtin_expect(a >= w->lo && a < w->hi && w->hi - a >= 8 && !(a & 7), 1)) {
        *v = *(const uintptr_t *)a;
        return 0;
    }
    if ((a & 7) || a < 4096 || !pl_mem_readable(a))
        return -1;
    w->probes++;
    *v = *(const uintptr_t *)a;
    return 0;
}

/* ---- the walk ---- */

#define PL_MODULE_CHECK_EVERY 65536u /* walks per thread between unload checks */
#define PL_LEARN_FRAMES (4 * HI_MAX_FRAMES) /* how far a walk goes to learn the stack's top */
#define PL_LEARN_RETRY 64u /* walks off the span between two that try to learn it */
#define PL_MAX_SIGNAL_FRAMES 8
#define PL_GUESS_SPAN 0x4000 /* libunwind's bound on a guessed frame's size */

static unsigned long long pl_stack_subs; /* dlpi_subs when the rule cache was last known good */

static int read_subs(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        *(unsigned long long *)data = info->dlpi_subs;
    return 1;
}

/* Once in a while: a module was unloaded, its addresses may be reused by
 * code with other rules, forget them all. */
static void check_modules(void)
{
    unsigned long long subs = 0;
    dl_iterate_phdr(read_subs, &subs);
    unsigned long long seen = __atomic_load_n(&pl_stack_subs, __ATOMIC_RELAXED);
    if (subs != seen && __atomic_compare_exchange_n(&pl_stack_subs, &seen, subs, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))
        pl_cfi_flush();
}

/* Where the kernel saved the interrupted registers: a ucontext at the
 * stack pointer the signal trampoline runs with (x86-64 rt_sigframe:
 * the handler's return address, then the ucontext). */
#define UC_RIP offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP])
#define UC_RSP offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP])
#define UC_RBP offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP])

/* Walks from the caller of the hook (pc, sp, bp: the first frame outside
 * the payload) with the cached rules, recording up to max PCs and going
 * on to `learn` frames to find the stack's top when asked. A frame whose
 * rule is unknown (no CFI, a DWARF expression) is stepped by its frame
 * pointer if it looks like one, as libunwind did; otherwise the stack
 * ends there: what was recorded is right, only shorter. Every read goes through
 * load(), so a wrong rule can only give a wrong stack, never a fault.
 * Returns the number of PCs; *top is the outermost stack pointer. */
static uint32_t walk_frames(struct walk *w, uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t *pcs, uint32_t max,
                            uint32_t learn, uintptr_t *top)
{
    uint32_t n = 0, signals = 0;
    uintptr_t key = pc; /* the cache's key: a return address, or an exact pc + 1 */
    for (uint32_t frame = 0; frame < learn || n < max; frame++) {
        if (n < max)
            pcs[n++] = pc;
        uint64_t r = pl_cfi_word(key);
        unsigned kind = PL_CFI_KIND(r);
        uintptr_t cfa, nbp = bp, ra;
        if (kind == PL_CFI_FP) {
            cfa = bp + 16;
            if (cfa <= sp || load(w, cfa - 16, &nbp) || load(w, cfa - 8, &ra))
                goto cut;
        } else if (kind == PL_CFI_SP) {
            cfa = sp + PL_CFI_OFF(r);
            uint32_t slot = PL_CFI_SLOT(r);
            if (load(w, cfa - 8, &ra) || (slot && load(w, cfa - 8u * slot, &nbp)))
                goto cut;
        } else if (kind == PL_CFI_END) {
            goto end;
        } else if (PL_CFI_IS_SIGNAL(r) && signals < PL_MAX_SIGNAL_FRAMES) {
            /* sp is the ucontext; the interrupted pc is exact, not a
             * return address: its rule is that of pc itself. */
            uintptr_t nsp;
            if (load(w, sp + UC_RIP, &pc) || load(w, sp + UC_RSP, &nsp) || load(w, sp + UC_RBP, &bp) || pc < 0x4000)
                goto cut;
            signals++;
            w->crossed = 1;
            sp = nsp;
            key = pc + 1;
            continue;
        } else if (bp >= sp && bp - sp <= PL_GUESS_SPAN) {
            /* No rule (no CFI: JIT code, assembly; or one the cache cannot
             * express): libunwind's frame-chain guess, with its test that
             * rbp points a little above the frame; what it reads is checked
             * like every read. */
            cfa = bp + 16;
            if (load(w, bp, &nbp) || load(w, bp + 8, &ra))
                goto cut;
            w->guessed = 1;
        } else {
            goto cut;
        }
        if (ra < 0x4000) /* a cleared return address: the outermost frame */
            goto end;
        pc = key = ra;
        sp = cfa;
        bp = nbp;
    }
    *top = sp;
    return n; /* max frames (and as far as asked to learn) */
end:
    w->complete = 1;
    *top = sp;
    return n;
cut:
    w->truncated = 1;
    *top = sp;
    return n;
}

/* The walk of nearly every sample: the thread's span is known and every
 * frame has an FP, SP or END rule. The span's bounds stay in registers
 * (struct walk's fields would be reloaded after every store to pcs, which
 * may alias them), and a read needs no check but its upper bound: every
 * step goes up from the first frame, which lies above lo. -1 as soon as
 * anything else is met: a read past hi, no rule, a signal frame; the
 * caller then walks again with walk_frames, which handles them all. */
static int walk_known(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t *pcs, uint32_t max, const uintptr_t lo,
                      const uintptr_t hi)
{
    uint32_t n = 0;
    while (n < max) {
        pcs[n++] = pc;
        uint64_t r = pl_cfi_word_walk(pc);
        uintptr_t cfa;
        unsigned kind = PL_CFI_KIND(r);
        if (kind == PL_CFI_FP) {
            cfa = bp + 16;
            if (cfa <= sp || cfa > hi) /* [cfa - 16, cfa) lies above sp >= lo */
                return -1;
            bp = ((const uintptr_t *)cfa)[-2];
        } else if (kind == PL_CFI_SP) {
            cfa = sp + PL_CFI_OFF(r);
            if (cfa > hi)
                return -1;
            uint32_t slot = PL_CFI_SLOT(r);
            if (slot) {
                uintptr_t at = cfa - 8u * slot;
                if (at < lo)
                    return -1;
                bp = *(const uintptr_t *)at;
            }
        } else if (kind == PL_CFI_END) {
            return (int)n;
        } else {
            return -1;
        }
        uintptr_t ra = ((const uintptr_t *)cfa)[-1];
        if (ra < 0x4000) /* a cleared return address: the outermost frame */
            return (int)n;
        pc = ra;
        sp = cfa;
    }
    return (int)n;
}

/* The thread's stack span: the first walk, and any walk outside the span
 * known so far (deeper, or on another stack), reads through the kernel's
 * check and goes on to the outermost frame; when it got there without
 * crossing a signal frame (which may come from an alternate signal stack),
 * everything from its first frame to that top is this one stack, and
 * later walks starting inside it read it directly (walk_known). */
static uint32_t capture(uintptr_t *pcs, uint32_t max)
{
    struct pl_tls *t = &pl_tls;
    const uintptr_t start = (uintptr_t)__builtin_frame_address(0);
    uintptr_t bp = start;
    int known = bp >= t->stk_lo && bp < t->stk_hi;
    /* Not known yet (a thread's first walk), or another stack: glibc's
     * block or the main stack, from memory (stack_span.c); a walk that
     * checked each read with the kernel made a system call a filter may
     * kill. */
    if (!known && pl_stack_span_here(bp, &t->stk_lo, &t->stk_hi))
        known = 1;
    if (__builtin_expect(++t->walks % PL_MODULE_CHECK_EVERY == 1, 0))
        check_modules();

    /* Our own frames up to the hook's, whose return address is frame 0:
     * the payload is built with frame pointers, so this chain is sound
     * by construction and needs no check. */
    uintptr_t pc, sp;
    for (unsigned k = 0;; k++) {
        if (k > 16)
            return 0;
        pc = ((const uintptr_t *)bp)[1];
        sp = bp + 16;
        bp = ((const uintptr_t *)bp)[0];
        if (!pl_stack_in_payload(pc))
            break;
    }
    if (__builtin_expect(known, 1)) {
        int n = walk_known(pc, sp, bp, pcs, max, start, t->stk_hi);
        if (n >= 0)
            return (uint32_t)n;
    }
    struct walk w = { 0, 0, 0, 0, 0, 0, 0 };
    if (known) {
        w.lo = start;
        w.hi = t->stk_hi;
    }
    /* Going on past max to the outermost frame is what learns the span;
     * a stack deeper than PL_LEARN_FRAMES never gets there, so after a
     * walk that did not, the next PL_LEARN_RETRY walks off the span stop
     * at max (each read still checked). */
    uint32_t learn = 0;
    if (!known) {
        if (t->stk_retry)
            t->stk_retry--;
        else
            learn = PL_LEARN_FRAMES;
    }
    uintptr_t top;
    uint32_t n = walk_frames(&w, pc, sp, bp, pcs, max, learn, &top);
    if (learn && !w.complete)
        t->stk_retry = PL_LEARN_RETRY;
    if (w.truncated)
        __atomic_fetch_add(&pl_stack_truncated, 1, __ATOMIC_RELAXED);
    if (learn && w.complete && !w.crossed && !w.guessed && top > start) {
        uintptr_t lo = start;
        if (t->stk_hi == top && t->stk_lo < lo)
            lo = t->stk_lo; /* the same stack, seen deeper before */
        t->stk_lo = lo;
        t->stk_hi = top;
    }
    return n;
}

/* For a sample reached from a hook without a frame pointer by a call
 * that is not a tail call (hooks.c, NOFP): the frame-pointer chain of our
 * own frames would step over that hook's frame and lose its caller, the
 * allocating function. So every frame, ours included, is stepped by its
 * CFI rule (the payload's .eh_frame describes the frameless hook), each
 * read checked, and the payload's frames are dropped after. Slower than
 * capture(), and only a safety net: no compiler we build with makes that
 * call anything but a tail call. */
__attribute__((noinline)) uint32_t pl_stack_capture_unwind(uintptr_t *pcs, uint32_t max)
{
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    if (!pl_stack_fast)
        return 0;
    const uintptr_t *fp = __builtin_frame_address(0); /* this function has one */
    uintptr_t all[HI_MAX_FRAMES + 16], top;
    struct walk w = { 0, 0, 0, 0, 0, 0, 0 };
    uint32_t n = walk_frames(&w, fp[1], (uintptr_t)(fp + 2), fp[0], all, max + 16, 0, &top);
    uint32_t skip = 0;
    while (skip < n && pl_stack_in_payload(all[skip]))
        skip++;
    if (w.truncated)
        __atomic_fetch_add(&pl_stack_truncated, 1, __ATOMIC_RELAXED);
    uint32_t k = 0;
    for (; skip + k < n && k < max; k++)
        pcs[k] = all[skip + k];
    return pl_py_sample_splice(pcs, k, max);
}

/* noinline: each sees the caller's frames exactly as a hook's call
 * would (one payload frame more changes nothing: payload frames are
 * dropped). */
__attribute__((noinline)) uint32_t pl_stack_capture(uintptr_t *pcs, uint32_t max)
{
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    if (!pl_stack_fast)
        return 0;
    uint32_t n = capture(pcs, max);
    /* The thread's Python frames, when it runs Python code: sampled
     * allocations only, as the walk (payload/python/sample.h). */
    return pl_py_sample_splice(pcs, n, max);
}

/* Two instructions a frame: xor and multiply by an odd constant are each
 * a bijection of the 64-bit state, so two stacks of one length that differ
 * in one frame never collide; the final fold brings the high bits, where
 * the multiplications carry everything, down to the low ones that index
 * the bucket table. The table compares whole stacks anyway. */
uint64_t pl_stack_hash(const uintptr_t *pcs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ pcs[i]) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return h ? h : 1;
}
