/* stacknodes.c - (parent, pc) -> node id, open addressing (stacknodes.h). */
#include "payload/serve/stacknodes.h"

#include <errno.h>

#include "payload/sys/sys.h"

struct pl_node_slot {
    uint64_t pc;
    uint32_t parent;
    uint32_t id;               /* 0: empty */
};

static struct pl_node_slot *pl_slots; /* PL_STACKNODES_SLOTS */
static uint32_t pl_nslots;            /* in use this snapshot (power of two) */
static uint32_t pl_nnodes;
static size_t pl_touched;             /* bytes to clear at the end */
static uint64_t pl_claimed;           /* of the memory budget, for this snapshot */

int pl_stacknodes_init(void)
{
    if (pl_slots)
        return 0;
    pl_slots = pl_arena_map_child_empty(sizeof(*pl_slots) * PL_STACKNODES_SLOTS);
    return pl_slots ? 0 : -ENOMEM;
}

/* The smallest table: twice the frames still fit (a node per frame at
 * most, 3/4 full at most). Its pages are first touched at each snapshot
 * and given back after: a followed PostgreSQL backend's ~800 frames took
 * 16 pages of a 4096-slot table at its last snapshot, 8 of 2048 now. */
#define PL_STACKNODES_MIN_SLOTS 512u

void pl_stacknodes_begin(uint64_t frames)
{
    uint32_t n = PL_STACKNODES_MIN_SLOTS;
    while (n < PL_STACKNODES_SLOTS && n < 2 * frames)
        n *= 2;
    /* The table's pages are touched at random: all of it counts against
     * the memory budget (arena.h), for this snapshot. A smaller table
     * fills sooner, and the stacks past it go as buckets of their own. */
    while (n > PL_STACKNODES_MIN_SLOTS && pl_arena_claim((uint64_t)n * sizeof(struct pl_node_slot)) < 0)
        n /= 2;
    if (n == PL_STACKNODES_MIN_SLOTS && pl_arena_claim((uint64_t)n * sizeof(struct pl_node_slot)) < 0)
        n = 0;
    pl_claimed = (uint64_t)n * sizeof(struct pl_node_slot);
    pl_nslots = pl_slots ? n : 0;
    pl_nnodes = 0;
}

/* A node's slot comes from a hash of its whole path (outermost first), not
 * of (parent id, pc): the same node gets the same hash (a parent id is one
 * path), and all the slots of a stack are known before its walk, so they
 * are fetched from memory together instead of one cache miss after the
 * other (the walk took 80% of a 100,000-stack snapshot in the target).
 * The (parent, pc) comparison keeps it exact. */
static uint64_t path_step(uint64_t h, uint64_t pc)
{
    h = (h ^ pc) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

int pl_stacknodes_path(const uintptr_t *pcs, uint32_t n, uint32_t *node, pl_stacknodes_emit emit, void *ctx)
{
    uint64_t hs[PL_STACKNODES_MAX_DEPTH];
    if (n > PL_STACKNODES_MAX_DEPTH || !pl_nslots)
        return -ENOSPC;
    uint64_t h = 0x6865617073746b73ull;
    for (uint32_t f = n; f-- > 0;) {
        h = path_step(h, pcs[f]);
        hs[f] = h;
        __builtin_prefetch(&pl_slots[(uint32_t)(h >> 32) & (pl_nslots - 1)]);
    }
    uint32_t parent = 0;
    for (uint32_t f = n; f-- > 0;) {
        uint64_t pc = pcs[f];
        uint32_t i = (uint32_t)(hs[f] >> 32) & (pl_nslots - 1);
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
    pl_arena_unclaim(pl_claimed);
    pl_claimed = 0;
}
