/* payload_interpose_hooks_floor.c - the bench's forward-only hooks
 * (payload/interpose/hooks_floor.c): each family's malloc, free, calloc
 * and realloc stand-ins call that family's own original with the caller's
 * arguments and return its result untouched, a family never reaches
 * another's originals, and functions past the malloc family have none. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "payload/interpose/family.h"
#include "payload/interpose/hooks_floor.h"

/* Fake originals: each records which family it stands for and its arguments. */
static int seen_family, seen_fn;
static size_t seen_a, seen_b;
static void *seen_p;
static char block[4][64];

#define FAKES(F)                                                                                \
    static void *fake_malloc_##F(size_t n) { seen_family = F; seen_fn = PL_F_MALLOC; seen_a = n; return block[F]; } \
    static void fake_free_##F(void *p) { seen_family = F; seen_fn = PL_F_FREE; seen_p = p; }                        \
    static void *fake_calloc_##F(size_t a, size_t b)                                            \
    {                                                                                           \
        seen_family = F; seen_fn = PL_F_CALLOC; seen_a = a; seen_b = b; return block[F] + 1;   \
    }                                                                                           \
    static void *fake_realloc_##F(void *p, size_t n)                                            \
    {                                                                                           \
        seen_family = F; seen_fn = PL_F_REALLOC; seen_p = p; seen_a = n; return block[F] + 2;  \
    }
FAKES(0)
FAKES(1)
FAKES(2)
FAKES(3)

static void install(int f, void *m, void *fr, void *c, void *r)
{
    pl_families[f].orig[PL_F_MALLOC] = m;
    pl_families[f].orig[PL_F_FREE] = fr;
    pl_families[f].orig[PL_F_CALLOC] = c;
    pl_families[f].orig[PL_F_REALLOC] = r;
}

Test(hooks_floor, each_family_forwards_to_its_own_originals)
{
    install(0, fake_malloc_0, fake_free_0, fake_calloc_0, fake_realloc_0);
    install(1, fake_malloc_1, fake_free_1, fake_calloc_1, fake_realloc_1);
    install(2, fake_malloc_2, fake_free_2, fake_calloc_2, fake_realloc_2);
    install(3, fake_malloc_3, fake_free_3, fake_calloc_3, fake_realloc_3);
    for (int f = 0; f < PL_MAX_FAMILIES; f++) {
        void *(*m)(size_t) = (void *(*)(size_t))pl_hook_floor_addr(f, PL_F_MALLOC);
        void (*fr)(void *) = (void (*)(void *))pl_hook_floor_addr(f, PL_F_FREE);
        void *(*c)(size_t, size_t) = (void *(*)(size_t, size_t))pl_hook_floor_addr(f, PL_F_CALLOC);
        void *(*r)(void *, size_t) = (void *(*)(void *, size_t))pl_hook_floor_addr(f, PL_F_REALLOC);
        cr_assert(m && fr && c && r, "family %d lacks a floor hook", f);
        cr_expect_neq((void *)m, (void *)fake_malloc_0, "the floor hook is the original itself");

        cr_expect_eq(m(100 + f), block[f]);
        cr_expect_eq(seen_family, f);
        cr_expect_eq(seen_fn, PL_F_MALLOC);
        cr_expect_eq(seen_a, 100 + f);

        fr(block[f] + 5);
        cr_expect_eq(seen_family, f);
        cr_expect_eq(seen_fn, PL_F_FREE);
        cr_expect_eq(seen_p, block[f] + 5);

        cr_expect_eq(c(3, 7 + f), block[f] + 1);
        cr_expect_eq(seen_family, f);
        cr_expect_eq(seen_fn, PL_F_CALLOC);
        cr_expect(seen_a == 3 && seen_b == (size_t)(7 + f), "calloc's arguments changed");

        cr_expect_eq(r(block[f] + 9, 4096), block[f] + 2);
        cr_expect_eq(seen_family, f);
        cr_expect_eq(seen_fn, PL_F_REALLOC);
        cr_expect(seen_p == block[f] + 9 && seen_a == 4096, "realloc's arguments changed");
    }
    /* the four families' hooks are distinct functions */
    cr_expect_neq(pl_hook_floor_addr(0, PL_F_MALLOC), pl_hook_floor_addr(1, PL_F_MALLOC));
    cr_expect_neq(pl_hook_floor_addr(2, PL_F_FREE), pl_hook_floor_addr(3, PL_F_FREE));
    /* no floor past the malloc family (mmap and dlsym keep their own hooks) */
    cr_expect_eq(pl_hook_floor_addr(0, PL_F_MMAP), 0);
    cr_expect_eq(pl_hook_floor_addr(1, PL_F_DLSYM), 0);
}
