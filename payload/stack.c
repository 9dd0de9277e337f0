/* stack.c - unw_backtrace capture with the payload's frames dropped. */
#include "payload/stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <libunwind.h>

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

int pl_stack_init(void)
{
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

uint32_t pl_stack_capture(uintptr_t *pcs, uint32_t max)
{
    /* A few extra slots for the frames dropped from the top. */
    void *buf[HI_MAX_FRAMES + 8];
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
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
