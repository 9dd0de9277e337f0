/* payload_record_cfi_hints.c - a followed fork child's misses in the
 * unwind-rule cache reach its parent's cache (payload/record/
 * cfi_hints.h): only a child's, through the shared ring, computed by the
 * parent; a lapped ring loses the oldest, never more than it holds. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "payload/record/cfi.h"
#include "payload/record/cfi_hints.h"

/* Whether ra's rule is in this process's cache (a look, no computing). */
static int cached(uintptr_t ra)
{
    for (size_t i = 0; i < ((size_t)1 << PL_CFI_BITS); i++)
        if ((__atomic_load_n(&pl_cfi_cache[i], __ATOMIC_RELAXED) & PL_CFI_RA_MASK) == ra)
            return 1;
    return 0;
}

/* Return addresses inside this test's own code (each a call site). */
static __attribute__((noinline)) uintptr_t here_a(void)
{
    return (uintptr_t)__builtin_return_address(0);
}

static __attribute__((noinline)) uintptr_t here_b(void)
{
    return (uintptr_t)__builtin_return_address(0);
}

static void setup(void)
{
    cr_assert_eq(pl_cfi_init(), 0);
    pl_cfi_flush();
    cr_assert_eq(pl_cfi_hints_open(), 0);
    pl_cfi_hints_drain(PL_CFI_HINTS); /* an earlier test's leftovers */
}

/* A child that misses ras (as a followed child: hints on), then exits. */
static void child_misses(const uintptr_t *ras, unsigned n, unsigned times)
{
    pid_t pid = fork();
    if (pid == 0) {
        pl_cfi_hints_as_child();
        for (unsigned t = 0; t < times; t++)
            for (unsigned i = 0; i < n; i++)
                (void)pl_cfi_miss(ras[i]);
        _exit(0);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

Test(cfi_hints, a_childs_misses_are_cached_in_the_parent, .init = setup)
{
    uintptr_t ras[2] = { here_a(), here_b() };
    cr_assert(!cached(ras[0]) && !cached(ras[1]), "nothing cached before");
    child_misses(ras, 2, 1);
    cr_expect(!cached(ras[0]), "the child's own cache is its own");
    cr_expect_eq(pl_cfi_hints_drain(PL_CFI_HINTS), 2);
    cr_expect(cached(ras[0]) && cached(ras[1]), "the parent computed and cached both");
    /* The rule the parent cached is the one the CFI gives here. */
    struct pl_cfi_rule r1, r2;
    pl_cfi_rule(ras[0], &r1);
    pl_cfi_rule_uncached(ras[0], &r2);
    cr_expect(r1.kind == r2.kind && r1.cfa_off == r2.cfa_off && r1.rbp_slot == r2.rbp_slot);
    cr_expect_eq(pl_cfi_hints_drain(PL_CFI_HINTS), 0, "taken once");
}

Test(cfi_hints, the_parents_own_misses_are_not_hinted, .init = setup)
{
    (void)pl_cfi_miss(here_a());
    cr_expect_eq(pl_cfi_hints_drain(PL_CFI_HINTS), 0);
}

Test(cfi_hints, a_lapped_ring_keeps_its_last_slots, .init = setup)
{
    uintptr_t ra = here_b();
    child_misses(&ra, 1, PL_CFI_HINTS * 2 + 7);
    cr_expect_eq(pl_cfi_hints_drain(PL_CFI_HINTS * 4), PL_CFI_HINTS);
    cr_expect(cached(ra));
    cr_expect_eq(pl_cfi_hints_drain(PL_CFI_HINTS), 0);
}

Test(cfi_hints, drained_in_bounded_steps, .init = setup)
{
    uintptr_t ra = here_a();
    child_misses(&ra, 1, 10);
    cr_expect_eq(pl_cfi_hints_drain(4), 4);
    cr_expect_eq(pl_cfi_hints_drain(4), 4);
    cr_expect_eq(pl_cfi_hints_drain(4), 2);
}

/* The fork child's release of the session's tables (pl_atfork_child):
 * a followed child keeps the rules it was born with, any other gives
 * them back. */
#include "payload/record/addrmap.h"
#include "payload/record/bucket.h"
#include "payload/record/maptrack.h"
#include "payload/serve/snapshot.h"
#include "payload/serve/teardown.h"

static int released_in_child_keeps(uintptr_t ra, int keep_rules)
{
    pid_t pid = fork();
    if (pid == 0) {
        pl_session_release_tables(keep_rules);
        _exit(cached(ra) ? 10 : 11);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "child: status %d", st);
    return WEXITSTATUS(st) == 10;
}

Test(cfi_hints, a_followed_child_keeps_the_rules_it_was_born_with, .init = setup)
{
    cr_assert(pl_bucket_init() == 0 && pl_addrmap_init() == 0 && pl_maptrack_init() == 0 && pl_snapshot_init() == 0);
    uintptr_t ra = here_a();
    (void)pl_cfi_word(ra);
    cr_assert(cached(ra));
    cr_expect(released_in_child_keeps(ra, 1), "followed: kept");
    cr_expect(!released_in_child_keeps(ra, 0), "not followed: given back");
    cr_expect(cached(ra), "the parent's own are untouched");
}
