/* stack_span.c - a thread's stack span without a system call.
 *
 * A thread's first stack walk used to check every read with the kernel
 * (pl_mem_readable: an rt_sigprocmask each) until it had walked to the
 * outermost frame and so learnt its span. A program that installs a
 * seccomp filter with the raw instruction (no libc slot of ours sees it,
 * hooks_sandbox.c) killing rt_sigprocmask died at that first walk, within
 * the agent's 500 ms scan (issue 25). The span is now known before the
 * first walk, from memory only:
 *   - a glibc thread: its struct pthread (the thread pointer) sits at the
 *     top of its stack block, and keeps the block's start, size and guard
 *     size in three words. Their offset is no ABI, so it is found on the
 *     agent thread, whose block holds both its current frame and its
 *     struct pthread (pl_stack_span_learn); 1,680 in glibc 2.36.
 *     [guard end, block end) is one mapping, readable (glibc maps the
 *     block at once and protects only the guard at its bottom), or the
 *     program's own stack given with pthread_attr_setstack.
 *   - the main thread (no block there: glibc leaves it NULL): the
 *     mapping of __libc_stack_end, read from /proc at start. A stack
 *     mapping only grows, so [start low, top) stays mapped.
 * A frame outside both (a coroutine's stack, a signal stack, a thread
 * made by a raw clone) is walked as before, each read checked.
 */
#include "payload/record/stack_span.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "payload/sys/sys.h"

extern void *__libc_stack_end;

#define SPAN_TCB_ROOM 65536u /* top of the block - struct pthread: its size and alignment, at most */

static uintptr_t main_lo, main_hi;       /* written at start, read by samples */
static int32_t block_off = -1;           /* offset of stackblock in struct pthread, or -1 */

void pl_stack_span_init(void)
{
    uintptr_t lo, hi;
    if (main_hi == 0 && pl_maps_range((uintptr_t)__libc_stack_end, &lo, &hi) == 0) {
        main_lo = lo;
        main_hi = hi;
    }
}

/* The three words at self + off as a block that holds `at` below self
 * and self near its top; 1 and the span. */
static int block_holds(const unsigned char *self, int32_t off, uintptr_t at, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t w[3];
    memcpy(w, self + off, sizeof(w));
    uintptr_t block = w[0], size = w[1], guard = w[2], s = (uintptr_t)self;
    if (!block || size < guard || block + size < block)
        return 0;
    uintptr_t top = block + size;
    if (!(block + guard <= at && at < s && s < top && top - s <= SPAN_TCB_ROOM))
        return 0;
    *lo = block + guard;
    *hi = top;
    return 1;
}

void pl_stack_span_learn(void)
{
    if (__atomic_load_n(&block_off, __ATOMIC_ACQUIRE) >= 0)
        return;
    const unsigned char *self = (const unsigned char *)pthread_self();
    uintptr_t at = (uintptr_t)__builtin_frame_address(0), lo, hi;
    /* Only the page of self is surely mapped before the block is known. */
    uintptr_t room = (((uintptr_t)self | 4095) + 1) - (uintptr_t)self;
    int32_t found = -1;
    for (uintptr_t off = 0; off + 3 * sizeof(uintptr_t) <= room; off += sizeof(uintptr_t)) {
        if (!block_holds(self, (int32_t)off, at, &lo, &hi) || ((lo - *(const uintptr_t *)(self + off + 16)) & 4095))
            continue; /* glibc's own block, mmapped: page aligned */
        if (found >= 0)
            return; /* two candidates: none is trusted */
        found = (int32_t)off;
    }
    if (found >= 0)
        __atomic_store_n(&block_off, found, __ATOMIC_RELEASE);
}

int pl_stack_span_here(uintptr_t at, uintptr_t *lo, uintptr_t *hi)
{
    int32_t off = __atomic_load_n(&block_off, __ATOMIC_ACQUIRE);
    if (off >= 0 && block_holds((const unsigned char *)pthread_self(), off, at, lo, hi))
        return 1;
    if (at >= main_lo && at < main_hi) {
        *lo = main_lo;
        *hi = main_hi;
        return 1;
    }
    return 0;
}

int pl_stack_span_initial_thread(void)
{
    int32_t off = __atomic_load_n(&block_off, __ATOMIC_ACQUIRE);
    if (off < 0)
        return -1;
    uintptr_t block;
    memcpy(&block, (const unsigned char *)pthread_self() + off, sizeof(block));
    return block == 0;
}
