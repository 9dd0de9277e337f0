/* payload_census_uncopied.c - the agent's reading of memory a fork does not
 * copy (payload/census/uncopied.h), on the test's own process: a
 * MADV_DONTFORK mapping and a MADV_WIPEONFORK one are found and read; only
 * words pointing into copied anonymous writable memory are kept, each
 * under its mapping; pages never written are not read (and stay
 * unpopulated); an excluded range and a plain mapping are not taken; a
 * deadline already past publishes nothing and still says done. */
#include <criterion/criterion.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/census/uncopied.h"
#include "payload/sys/clock.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

#define PG 4096u

static void *map(size_t len, int advice)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    if (advice >= 0)
        cr_assert_eq(madvise(p, len, advice), 0);
    return p;
}

static const struct pl_uncopied_map *find(const struct pl_uncopied *u, const void *lo)
{
    for (uint32_t i = 0; i < u->n_maps; i++)
        if (u->maps[i].lo == (uintptr_t)lo)
            return &u->maps[i];
    return NULL;
}

static int holds(const struct pl_uncopied *u, const struct pl_uncopied_map *m, uintptr_t v)
{
    for (uint64_t k = m->first; k < m->first + m->count; k++)
        if (u->values[k] == v)
            return 1;
    return 0;
}

/* mincore: is the page at p resident? */
static int resident(const void *p)
{
    unsigned char v = 0;
    cr_assert_eq(mincore((void *)((uintptr_t)p & ~(uintptr_t)(PG - 1)), PG, &v), 0);
    return v & 1;
}

Test(census_uncopied, finds_reads_and_filters)
{
    char *target = map(16 * PG, -1);          /* copied anonymous memory: where blocks live */
    memset(target, 1, 16 * PG);
    char *plain = map(4 * PG, -1);            /* copied: not read by the agent */
    uintptr_t *dc = map(64 * PG, MADV_DONTFORK);
    uintptr_t *wf = map(8 * PG, MADV_WIPEONFORK);
    uintptr_t *ex = map(4 * PG, MADV_DONTFORK); /* excluded: the profiler's own */
    ((uintptr_t *)plain)[0] = (uintptr_t)(target + 8);
    /* dc: page 0 holds two pointers into target and one elsewhere; page 40
     * one more; the rest is never written */
    dc[0] = (uintptr_t)(target + 100);
    dc[1] = 0x1234;                          /* no pointer */
    dc[2] = (uintptr_t)(plain + 16);         /* points into plain: also copied memory */
    dc[40 * PG / sizeof(uintptr_t) + 5] = (uintptr_t)(target + 15 * PG);
    dc[3] = (uintptr_t)(dc + 7);              /* into uncopied memory itself: not kept */
    wf[PG / sizeof(uintptr_t)] = (uintptr_t)(target + 2 * PG);
    ex[0] = (uintptr_t)(target + 3 * PG);
    /* read-only: the kernel would merge it with dc, its neighbour of the
     * same flags, into one line of the maps */
    cr_assert_eq(mprotect(ex, 4 * PG, PROT_READ), 0);
    cr_assert(!resident((char *)dc + 20 * PG));

    struct pl_uncopied *u = pl_uncopied_create();
    cr_assert_not_null(u);
    struct pl_census_range exclude[1] = { { (uintptr_t)ex, (uintptr_t)ex + 4 * PG } };
    pl_uncopied_scan(u, exclude, 1, pl_now_ns() + 10ull * 1000000000ull);
    cr_assert_eq(u->done, 1);

    const struct pl_uncopied_map *m = find(u, dc);
    cr_assert_not_null(m, "the DONTFORK mapping was not found");
    cr_assert_eq(m->hi, (uintptr_t)dc + 64 * PG);
    cr_assert(holds(u, m, (uintptr_t)(target + 100)));
    cr_assert(holds(u, m, (uintptr_t)(plain + 16)));
    cr_assert(holds(u, m, (uintptr_t)(target + 15 * PG)));
    cr_assert(!holds(u, m, 0x1234));
    cr_assert(!holds(u, m, (uintptr_t)(dc + 7)), "a pointer into uncopied memory was kept");
    cr_assert_eq(m->read_bytes, 2 * PG, "read %llu bytes: want the 2 written pages", (unsigned long long)m->read_bytes);
    cr_assert_eq(m->unread_bytes, 0);
    cr_assert(!resident((char *)dc + 20 * PG), "the scan populated a page never written");

    const struct pl_uncopied_map *w = find(u, wf);
    cr_assert_not_null(w, "the WIPEONFORK mapping was not found");
    cr_assert(holds(u, w, (uintptr_t)(target + 2 * PG)));
    cr_assert_null(find(u, ex), "an excluded range was read");
    cr_assert_null(find(u, plain), "a plain mapping was taken for uncopied");
    cr_assert_null(find(u, target));
    cr_assert_geq(u->total_bytes, 72 * PG);
    pl_uncopied_destroy(u);
}

Test(census_uncopied, past_deadline_publishes_nothing)
{
    char *target = map(4 * PG, -1);
    memset(target, 1, 4 * PG);
    uintptr_t *dc = map(4 * PG, MADV_DONTFORK);
    dc[0] = (uintptr_t)target;
    struct pl_uncopied *u = pl_uncopied_create();
    cr_assert_not_null(u);
    pl_uncopied_scan(u, NULL, 0, pl_now_ns() - 1);
    cr_assert_eq(u->done, 1);
    cr_assert_eq(u->n_maps, 0, "a mapping read after the deadline was published");
    cr_assert_geq(u->total_bytes, 4 * PG, "the uncopied bytes are still counted (as not read)");
    pl_uncopied_destroy(u);
}
