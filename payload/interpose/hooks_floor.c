/* hooks_floor.c - hooks that only forward: the floor of this design.
 *
 * `floor=1` in the start config (bench/hook_bench --floor only; the cli
 * never sends it) patches the same GOT slots as a session does, but with
 * these functions: one load of the original from the family table and a
 * tail call, no accounting at all. What a malloc+free pair costs with
 * them over no payload is what any GOT-hook design pays on this machine;
 * `make bench` prints the real hooks' cost next to it (issue 17). */
#include <stddef.h>
#include <stdint.h>

#include "payload/interpose/family.h"
#include "payload/interpose/hooks_floor.h"

int pl_hooks_floor; /* set by heapinject_start before patching */

#define ORIG(F, FN) (__atomic_load_n(&pl_families[F].orig[FN], __ATOMIC_RELAXED))

#define PL_FLOOR_HOOKS(F)                                                                          \
    static void *floor_malloc_##F(size_t n) { return ((void *(*)(size_t))ORIG(F, PL_F_MALLOC))(n); } \
    static void floor_free_##F(void *p) { ((void (*)(void *))ORIG(F, PL_F_FREE))(p); }              \
    static void *floor_calloc_##F(size_t a, size_t b)                                               \
    {                                                                                               \
        return ((void *(*)(size_t, size_t))ORIG(F, PL_F_CALLOC))(a, b);                             \
    }                                                                                               \
    static void *floor_realloc_##F(void *p, size_t n)                                               \
    {                                                                                               \
        return ((void *(*)(void *, size_t))ORIG(F, PL_F_REALLOC))(p, n);                            \
    }

PL_FLOOR_HOOKS(0)
PL_FLOOR_HOOKS(1)
PL_FLOOR_HOOKS(2)
PL_FLOOR_HOOKS(3)

#define PL_FLOOR_ROW(F)                                                                            \
    {                                                                                              \
        [PL_F_MALLOC] = (uintptr_t)floor_malloc_##F, [PL_F_FREE] = (uintptr_t)floor_free_##F,      \
        [PL_F_CALLOC] = (uintptr_t)floor_calloc_##F, [PL_F_REALLOC] = (uintptr_t)floor_realloc_##F, \
    }

_Static_assert(PL_MAX_FAMILIES == 4, "one PL_FLOOR_HOOKS per family");

static const uintptr_t pl_floor[PL_MAX_FAMILIES][PL_F_MALLOC_COUNT] = {
    PL_FLOOR_ROW(0), PL_FLOOR_ROW(1), PL_FLOOR_ROW(2), PL_FLOOR_ROW(3),
};

uintptr_t pl_hook_floor_addr(int family, unsigned func)
{
    return func < PL_F_MALLOC_COUNT ? pl_floor[family][func] : 0;
}
