/* stack.c - call stacks: the cached CFI walk, libunwind where it cannot go. */
#include "payload/stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
/* local unwinding only: the _UL* entry points of libunwind.so */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "payload/cfi.h"
#include "payload/thread.h"

struct pl_range {
    uintptr_t lo, hi;
};

/* Written once by pl_stack_init (start lock), read by the sampled path. */
static struct pl_range pl_payload_text, pl_unwind_text;

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
    struct range_arg a = { (uintptr_t)&pl_stack_init, &pl_payload_text };
    if (!dl_iterate_phdr(find_text, &a))
        return -ENOENT;
    a.inside = (uintptr_t)&unw_backtrace;
    a.out = &pl_unwind_text;
    dl_iterate_phdr(find_text, &a); /* libunwind linked statically: no range */
    return 0;
}

int pl_stack_in_payload(uintptr_t pc)
{
    return pc >= pl_payload_text.lo && pc < pl_payload_text.hi;
}

static int dropped_frame(uintptr_t pc)
{
    return (pc >= pl_payload_text.lo && pc < pl_payload_text.hi) ||
           (pc >= pl_unwind_text.lo && pc < pl_unwind_text.hi);
}

static uint32_t unwind_capture(uintptr_t *pcs, uint32_t max)
{
    /* A few extra slots for the frames dropped from the top. */
    void *buf[HI_MAX_FRAMES + 8];
    int n = unw_backtrace(buf, (int)(max + 8));
    if (n <= 0)
        return 0;
    int skip = 0;
    while (skip < n && dropped_frame((uintptr_t)buf[skip]))
        skip++;
    uint32_t out = 0;
    for (int i = skip; i < n && out < max; i++)
        pcs[out++] = (uintptr_t)buf[i];
    return out;
}

/* ---- the thread's stack span ---- */

/* [lo, hi): from our own frame up to the stack pointer of the outermost
 * frame, learnt with libunwind's full walk (unw_step, no system call of
 * ours: a sandboxed thread may have a seccomp filter that kills on open).
 * Every frame of a later walk that starts at or above lo lies below hi,
 * and everything between is this one stack, so every read of the CFI walk
 * can be checked against it. A walk through a signal frame teaches
 * nothing (it may have crossed from an alternate signal stack). 0 or -1. */
static int learn_stack(uintptr_t *lo_out, uintptr_t *hi_out)
{
    unw_context_t uc;
    unw_cursor_t c;
    unw_word_t sp = 0, top = 0;
    if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0 || unw_get_reg(&c, UNW_REG_SP, &sp) < 0)
        return -1;
    for (unsigned i = 0; i < 4 * HI_MAX_FRAMES; i++) {
        if (unw_is_signal_frame(&c) > 0 || unw_get_reg(&c, UNW_REG_SP, &top) < 0)
            return -1;
        int r = unw_step(&c);
        if (r == 0)
            break;
        if (r < 0)
            return -1;
    }
    if (top <= sp)
        return -1;
    *lo_out = (uintptr_t)sp;
    *hi_out = (uintptr_t)top;
    return 0;
}

/* ---- the cached CFI walk ---- */

#define PL_MODULE_CHECK_EVERY 65536u /* walks per thread between unload checks */

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

/* Walks from the caller of the hook with the cached rules. Every read is
 * inside [our own frame, top of the span learnt for this thread), so a
 * wrong rule can only give a wrong stack, never a fault. Returns the number of
 * PCs, or -1 when some frame needs libunwind (signal frame, expressions,
 * no CFI, leaving the stack): the caller then unwinds it all with
 * libunwind, so a stack is always recorded the same way. */
static int cfi_capture(uintptr_t *pcs, uint32_t max)
{
    struct pl_tls *t = &pl_tls;
    uintptr_t bp = (uintptr_t)__builtin_frame_address(0);
    if (bp < t->stk_lo || bp >= t->stk_hi) {
        /* deeper than any walk so far, another stack, or never learnt:
         * libunwind for this one, and now and then learn again */
        if (t->stk_retry) {
            t->stk_retry--;
            return -1;
        }
        t->stk_retry = 64;
        uintptr_t lo, hi;
        if (learn_stack(&lo, &hi) != 0)
            return -1;
        if (t->stk_hi == hi && lo > t->stk_lo)
            lo = t->stk_lo; /* the same stack, seen deeper before */
        t->stk_lo = lo;
        t->stk_hi = hi;
        if (bp < lo || bp >= hi)
            return -1;
    }
    if (++t->walks % PL_MODULE_CHECK_EVERY == 1)
        check_modules();
    const uintptr_t lo = bp, hi = t->stk_hi;
#define IN_STACK(a) ((a) >= lo && (a) <= hi - 8 && !((a) & 7))

    /* Our own frames up to the hook's, whose return address is frame 0:
     * the payload is built with frame pointers, so this chain is sound
     * by construction and needs no bounds. */
    uintptr_t pc, sp;
    for (unsigned k = 0;; k++) {
        if (k > 16)
            return -1;
        pc = ((const uintptr_t *)bp)[1];
        sp = bp + 16;
        bp = ((const uintptr_t *)bp)[0];
        if (!pl_stack_in_payload(pc))
            break;
    }
    uint32_t n = 0;
    while (n < max) {
        pcs[n++] = pc;
        uint64_t w = pl_cfi_word(pc);
        unsigned kind = PL_CFI_KIND(w);
        uintptr_t cfa, nbp;
        if (kind == PL_CFI_FP) {
            cfa = bp + 16;
            if (cfa <= sp || !IN_STACK(cfa - 16))
                return -1;
            nbp = ((const uintptr_t *)cfa)[-2];
        } else if (kind == PL_CFI_SP) {
            cfa = sp + PL_CFI_OFF(w);
            if (!IN_STACK(cfa - 8))
                return -1;
            nbp = bp;
            uint32_t slot = PL_CFI_SLOT(w);
            if (slot) {
                uintptr_t at = cfa - 8u * slot;
                if (!IN_STACK(at))
                    return -1;
                nbp = *(const uintptr_t *)at;
            }
        } else if (kind == PL_CFI_END) {
            break;
        } else {
            return -1;
        }
        uintptr_t ra = ((const uintptr_t *)cfa)[-1];
        if (ra < 0x4000) /* libunwind's end: a bogus or cleared return address */
            break;
        pc = ra;
        sp = cfa;
        bp = nbp;
    }
#undef IN_STACK
    return (int)n;
}

/* noinline: each must see the caller's frames exactly as pl_stack_capture
 * would (one payload frame more changes nothing: payload frames are
 * dropped). */
__attribute__((noinline)) int pl_stack_capture_cfi(uintptr_t *pcs, uint32_t max)
{
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    return cfi_capture(pcs, max);
}

__attribute__((noinline)) uint32_t pl_stack_capture_unwind(uintptr_t *pcs, uint32_t max)
{
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    return unwind_capture(pcs, max);
}

uint32_t pl_stack_capture(uintptr_t *pcs, uint32_t max)
{
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    if (pl_stack_fast) {
        int n = cfi_capture(pcs, max);
        if (n >= 0)
            return (uint32_t)n;
    }
    return unwind_capture(pcs, max);
}

uint64_t pl_stack_hash(const uintptr_t *pcs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}
