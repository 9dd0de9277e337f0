/* stacknodes.c - (parent, pc) -> node id, open addressing (stacknodes.h). */
#include "payload/stacknodes.h"

#include <errno.h>

#include "payload/arena.h"

struct pl_node_slot {
    uint64_t pc;
    uint32_t parent;
    uint32_t id;               /* 0: empty */
};

static struct pl_node_slot *pl_slots; /* PL_STACKNODES_SLOTS */
static uint32_t pl_nslots;            /* in use this snapshot (power of two) */
static uint32_t pl_nnodes;
static size_t pl_touched;             /* bytes to clear at the end */

int pl_stacknodes_init(void)
{
    if (pl_slots)
        return 0;
    pl_slots = pl_arena_map(sizeof(*pl_slots) * PL_STACKNODES_SLOTS);
    return pl_slots ? 0 : -ENOMEM;
}

void pl_stacknodes_begin(uint64_t frames)
{
    uint32_t n = 4096;
    while (n < PL_STACKNODES_SLOTS && n < 2 * frames)
        n *= 2;
    pl_nslots = pl_slots ? n : 0;
    pl_nnodes = 0;
}

static uint32_t slot_of(uint32_t parent, uint64_t pc)
{
    uint64_t h = (pc ^ ((uint64_t)parent << 32 | parent)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (pl_nslots - 1);
}

int pl_stacknodes_path(const uintptr_t *pcs, uint32_t n, uint32_t *node, pl_stacknodes_emit emit, void *ctx)
{
    uint32_t parent = 0;
    for (uint32_t f = n; f-- > 0;) {
        uint64_t pc = pcs[f];
        uint32_t i = slot_of(parent, pc);
        struct pl_node_slot *s;
        for (;; i = (i + 1) & (pl_nslots - 1)) {
            s = &pl_slots[i];
            if (!s->id || (s->pc == pc && s->parent == parent))
                break;
        }
        if (!s->id) {
            if (pl_nnodes >= pl_nslots / 4 * 3)
                return -ENOSPC; /* keeps probes short and the table bounded */
            s->pc = pc;
            s->parent = parent;
            s->id = ++pl_nnodes;
            size_t end = (size_t)(i + 1) * sizeof(*s);
            if (end > pl_touched)
                pl_touched = end;
            int err = emit(ctx, s->id, parent, pc);
            if (err)
                return err;
        }
        parent = s->id;
    }
    *node = parent;
    return 0;
}

uint32_t pl_stacknodes_count(void)
{
    return pl_nnodes;
}

void pl_stacknodes_end(void)
{
    if (pl_slots && pl_touched)
        pl_arena_clear(pl_slots, pl_touched); /* whole pages: zeroed, out of RSS */
    pl_touched = 0;
    pl_nnodes = 0;
}
