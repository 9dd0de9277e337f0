/* cfi_hints.c - a followed child's cache misses, warmed in its parent
 * (see cfi_hints.h). */
#include "payload/record/cfi_hints.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "payload/record/cfi.h"

struct hint_ring {
    uint32_t head; /* slots ever claimed by the children (wraps) */
    uint32_t pad;
    uint64_t ra[PL_CFI_HINTS];
};

_Static_assert(sizeof(struct hint_ring) <= 4096, "one page");

static struct hint_ring *pl_ring; /* shared with the children forked after open */
static int pl_ring_child;         /* this process writes, its parent drains */
static uint32_t pl_ring_tail;     /* the parent's: slots it has taken */

int pl_cfi_hints_open(void)
{
    pl_ring_child = 0;
    if (pl_ring)
        return 0;
    void *p = mmap(NULL, sizeof(struct hint_ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    pl_ring_tail = 0;
    __atomic_store_n(&pl_ring, p, __ATOMIC_RELEASE);
    return 0;
}

void pl_cfi_hints_as_child(void)
{
    __atomic_store_n(&pl_ring_child, 1, __ATOMIC_RELEASE);
}

void pl_cfi_hint(uintptr_t ra)
{
    struct hint_ring *r = __atomic_load_n(&pl_ring, __ATOMIC_ACQUIRE);
    if (!r || !__atomic_load_n(&pl_ring_child, __ATOMIC_RELAXED) || ra == 0)
        return;
    uint32_t at = __atomic_fetch_add(&r->head, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&r->ra[at % PL_CFI_HINTS], (uint64_t)ra, __ATOMIC_RELEASE);
}

unsigned pl_cfi_hints_drain(unsigned max)
{
    struct hint_ring *r = __atomic_load_n(&pl_ring, __ATOMIC_ACQUIRE);
    if (!r || pl_ring_child || !pl_cfi_cache)
        return 0;
    uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    /* Lapped by the children: what was overwritten is lost, the rest
     * is still worth taking. */
    if (head - pl_ring_tail > PL_CFI_HINTS)
        pl_ring_tail = head - PL_CFI_HINTS;
    unsigned n = 0;
    for (; pl_ring_tail != head && n < max; pl_ring_tail++, n++) {
        /* 0: claimed, not written yet (or taken): a later child hints
         * it again if it still misses. */
        uint64_t ra = __atomic_exchange_n(&r->ra[pl_ring_tail % PL_CFI_HINTS], 0, __ATOMIC_ACQ_REL);
        if (ra)
            (void)pl_cfi_word((uintptr_t)ra);
    }
    return n;
}
