/* payload_census_mark.c - the census's mark and the crediting of retained
 * bytes to roots (pl_census_mark, payload/census/mark.c), on blocks and
 * global words made up in the test's own memory:
 *
 *   global word 1 -> A;  A -> the middle of B (and B's start: still one
 *                        root's);  A -> one past C's end;  B -> G
 *   global word 2 -> the middle of B  (B, and G below it, are shared)
 *   global word 4 -> K;  K -> L       (word 3 is 0: no root)
 *   D unreachable (it points at A);  E <-> F a cycle nothing reaches
 *
 * Reachable: A, B, G, K, L; unreachable: C, D, E, F. Root 1 is credited
 * with A only, root 2 with nothing of its own, root 3 (word 4) with K and
 * L, and the shared record of roots 1 and 2 with B and G. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "payload/census/heap.h"
#include "payload/census/index.h"

#define PG 4096u

enum { A, B, G, C, D, E, F, K, L, NBLK };

static const uint64_t csize[NBLK] = {
    [A] = 0x40, [B] = 0x80, [G] = 0x30, [C] = 0x30, [D] = 0x40,
    [E] = 0x50, [F] = 0x50, [K] = 0x100, [L] = 0x20,
};

struct fake {
    uintptr_t heap, globals;
    uintptr_t stack[2]; /* two threads' stacks, a page each (the threads' test) */
    struct pl_blk blk[NBLK];
    struct pl_cmap maps[4];
    struct pl_census_in *in;
    struct pl_census_out *out;
    struct pl_census cs;
};

static uint64_t usable(unsigned i)
{
    return csize[i] - 8; /* the next chunk's prev_size is lent */
}

static void put(uintptr_t at, uint64_t v)
{
    *(uint64_t *)at = v;
}

static void set_fake(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    uint8_t *base = mmap(NULL, 6u * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(base != MAP_FAILED);
    f->heap = (uintptr_t)base;        /* chunks one after another, as malloc lays them */
    f->globals = (uintptr_t)base + 3u * PG; /* a module's .data */
    f->stack[0] = (uintptr_t)base + 4u * PG; /* mapped, but no mapping of the census's */
    f->stack[1] = (uintptr_t)base + 5u * PG; /* until a test adds them (maps[2], maps[3]) */
    uintptr_t c = f->heap;
    for (unsigned i = 0; i < NBLK; i++) {
        put(c + 8, csize[i] | 1u);
        f->blk[i] = (struct pl_blk){ .mem = c + 16, .csize16 = (uint32_t)(csize[i] / 16) };
        c += csize[i];
    }
    const struct pl_blk *b = f->blk;
    put(b[A].mem, b[B].mem + 0x28);
    put(b[A].mem + 8, b[B].mem);
    put(b[A].mem + 16, b[C].mem + usable(C)); /* one past C's end: no pointer to C */
    put(b[B].mem + 0x40, b[G].mem + 8);
    put(b[D].mem, b[A].mem);
    put(b[E].mem + 8, b[F].mem);
    put(b[F].mem + 0x18, b[E].mem + 0x10);
    put(b[K].mem + 0xf0, b[L].mem); /* the last word of K's usable bytes */

    put(f->globals, b[A].mem);
    put(f->globals + 8, b[B].mem + 0x30);
    put(f->globals + 24, b[K].mem);

    f->maps[0] = (struct pl_cmap){ .lo = f->heap, .hi = f->heap + 3u * PG, .read = 1, .write = 1, .priv = 1,
                                   .anon = 1, .kind = PL_CMAP_HEAP };
    /* the module's data: scanned as globals, word by word (not private
     * here, so no mapping root scans it a second time) */
    f->maps[1] = (struct pl_cmap){ .lo = f->globals, .hi = f->globals + PG, .read = 1, .write = 1 };

    f->in = calloc(1, sizeof(*f->in));
    cr_assert_not_null(f->in);
    f->in->globals[0].lo = f->globals;
    f->in->globals[0].hi = f->globals + PG;
    f->in->n_globals = 1;
    f->out = mmap(NULL, PL_CENSUS_OUT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(f->out != MAP_FAILED);
    f->cs.in = f->in;
    f->cs.out = f->out;
    f->cs.maps = f->maps;
    f->cs.nmaps = 2;
    f->cs.pagemap = -1;
    f->cs.blk = f->blk;
    f->cs.nblk = f->cs.capblk = NBLK;
}

static const char *name(unsigned i)
{
    static const char *n[NBLK] = { "A", "B", "G", "C", "D", "E", "F", "K", "L" };
    return n[i];
}

static void expect_owned(const struct fake *f, unsigned i, uint32_t root_id)
{
    uint32_t want = PL_BLK_MARK | root_id << 8;
    cr_assert_eq(f->blk[i].flags, want, "%s: flags %#x, not %#x (reached by root %u alone)", name(i),
                 f->blk[i].flags, want, root_id);
}

static void expect_flags(const struct fake *f, unsigned i, uint32_t want, const char *what)
{
    cr_assert_eq(f->blk[i].flags, want, "%s: flags %#x, not %#x (%s)", name(i), f->blk[i].flags, want, what);
}

static void expect_root(const struct hi_census_root *r, uint32_t kind, uint64_t addr, uint64_t blocks,
                        uint64_t bytes)
{
    cr_assert_eq(r->kind, kind);
    cr_assert_eq(r->addr, addr, "root at %#lx, not %#lx", (unsigned long)r->addr, (unsigned long)addr);
    cr_assert_eq(r->retained_blocks, blocks, "root at %#lx: %lu blocks retained, not %lu", (unsigned long)addr,
                 (unsigned long)r->retained_blocks, (unsigned long)blocks);
    cr_assert_eq(r->retained_bytes, bytes, "root at %#lx: %lu bytes retained, not %lu", (unsigned long)addr,
                 (unsigned long)r->retained_bytes, (unsigned long)bytes);
}

Test(census_mark, reachable_blocks_and_retained_bytes)
{
    struct fake f;
    set_fake(&f);
    pl_census_mark(&f.cs);
    const struct hi_census_end *e = &f.out->end;
    cr_assert_eq(e->status, 0, "%s", e->why);
    cr_assert_not_null(f.cs.index, "the page index was built (the look-up the mark used)");

    expect_owned(&f, A, 1);
    expect_flags(&f, B, PL_BLK_MARK | PL_BLK_SHARED, "in the middle, from roots 1 and 2");
    expect_flags(&f, G, PL_BLK_MARK | PL_BLK_SHARED, "below B: roots 1 and 2 reach it through B");
    expect_owned(&f, K, 3);
    expect_owned(&f, L, 3);
    expect_flags(&f, C, 0, "a pointer one past its end is no pointer to it");
    expect_flags(&f, D, 0, "it points at A, nothing points at it");
    expect_flags(&f, E, 0, "a cycle nothing reaches");
    expect_flags(&f, F, 0, "a cycle nothing reaches");

    cr_assert_eq(f.out->n_roots, 4, "%u roots", f.out->n_roots);
    expect_root(&f.out->roots[0], HI_ROOT_GLOBAL, f.globals, 1, usable(A));
    cr_assert_eq(f.out->roots[0].via_size, usable(A));
    /* root 2 holds only what root 1 holds too: kept, as the shared
     * record names it */
    expect_root(&f.out->roots[1], HI_ROOT_GLOBAL, f.globals + 8, 0, 0);
    expect_root(&f.out->roots[2], HI_ROOT_GLOBAL, f.globals + 24, 2, usable(K) + usable(L));
    /* the shared record: addr and end are the ids of the two roots */
    expect_root(&f.out->roots[3], HI_ROOT_SHARED, 1, 2, usable(B) + usable(G));
    cr_assert_eq(f.out->roots[3].end, 2);

    uint64_t all = 0, lost = 0;
    for (unsigned i = 0; i < NBLK; i++)
        all += usable(i);
    lost = usable(C) + usable(D) + usable(E) + usable(F);
    cr_assert_eq(e->in_use_blocks, NBLK);
    cr_assert_eq(e->in_use_bytes, all);
    cr_assert_eq(e->unreachable_blocks, 4, "%lu unreachable", (unsigned long)e->unreachable_blocks);
    cr_assert_eq(e->unreachable_bytes, lost);
    /* the retained bytes add up to what is reachable */
    uint64_t credited = 0;
    for (unsigned r = 0; r < f.out->n_roots; r++)
        credited += f.out->roots[r].retained_bytes;
    cr_assert_eq(credited, all - lost);
}

/* Free blocks (a tcache's or a fastbin's) and the allocator's own are no
 * blocks of the program's: a pointer to them reaches nothing, not even
 * what their stale words point at. */
Test(census_mark, free_and_metadata_blocks_are_not_followed)
{
    struct fake f;
    set_fake(&f);
    f.blk[A].flags = PL_BLK_FREE;
    f.blk[K].flags = PL_BLK_META;
    pl_census_mark(&f.cs);
    cr_assert_eq(f.out->end.status, 0, "%s", f.out->end.why);
    expect_flags(&f, A, PL_BLK_FREE, "free");
    expect_flags(&f, K, PL_BLK_META, "the allocator's");
    expect_flags(&f, L, 0, "only a metadata block points at it");
    /* B and G: word 2 alone now, the first root (id 1) */
    expect_owned(&f, B, 1);
    expect_owned(&f, G, 1);
    cr_assert_eq(f.out->n_roots, 1, "%u roots", f.out->n_roots);
    expect_root(&f.out->roots[0], HI_ROOT_GLOBAL, f.globals + 8, 2, usable(B) + usable(G));
    cr_assert_eq(f.out->end.in_use_blocks, NBLK - 2);
    cr_assert_eq(f.out->end.free_blocks, 1);
    cr_assert_eq(f.out->end.free_bytes, csize[A]);
}

/* A thread's static TLS, stack and registers are one holder (mark.c): a
 * block that two of them reach is the thread's, credited to the first
 * (its TLS), not shared; a block that only a thread's stack reaches is
 * that stack's; a block that the stacks of two threads reach is shared.
 *
 *   thread 0's TLS   -> A  (A -> B -> G, as above)
 *   thread 0's stack -> the middle of B, and K (K -> L)
 *   thread 1's stack -> L
 *   the global words are cleared: no global root
 *
 * Roots: 1 thread 0's TLS, 2 its stack, 3 thread 1's stack (thread 0's
 * registers, all zero, hold nothing and are dropped), then the shared
 * record of roots 2 and 3 with L. */
Test(census_mark, a_threads_tls_and_stack_are_one_holder_two_threads_share)
{
    struct fake f;
    set_fake(&f);
    const struct pl_blk *b = f.blk;
    memset((void *)f.globals, 0, 32);
    for (unsigned t = 0; t < 2; t++)
        f.maps[2 + t] = (struct pl_cmap){ .lo = f.stack[t], .hi = f.stack[t] + PG, .read = 1, .write = 1,
                                          .priv = 1, .anon = 1, .kind = PL_CMAP_OTHER };
    f.cs.nmaps = 4;
    /* thread 0: stack pointer 256 bytes into its page, thread pointer
     * near the top with static TLS and TCB [tp - 128, tp + 64) */
    uintptr_t sp0 = f.stack[0] + 256, tp0 = f.stack[0] + PG - 64;
    f.in->tls_lo = -128;
    f.in->tls_hi = 64;
    put(tp0 - 40, b[A].mem);         /* a TLS word */
    put(sp0 + 8, b[B].mem + 0x10);   /* stack words */
    put(sp0 + 16, b[K].mem);
    uintptr_t sp1 = f.stack[1] + 512;
    put(sp1 + 24, b[L].mem + 4);
    f.in->threads[0] = (struct pl_census_thread){ .tid = 100, .has_sp = 1, .sp = sp0, .has_regs = 1, .tp = tp0 };
    f.in->threads[1] = (struct pl_census_thread){ .tid = 101, .has_sp = 1, .sp = sp1 };
    f.in->n_threads = 2;

    pl_census_mark(&f.cs);
    cr_assert_eq(f.out->end.status, 0, "%s", f.out->end.why);

    expect_owned(&f, A, 1);
    expect_owned(&f, B, 1); /* its thread's stack reaches it too: still the thread's, not shared */
    expect_owned(&f, G, 1);
    expect_owned(&f, K, 2); /* thread 0's stack alone */
    expect_flags(&f, L, PL_BLK_MARK | PL_BLK_SHARED, "thread 0's stack (through K) and thread 1's stack");
    expect_flags(&f, C, 0, "a pointer one past its end is no pointer to it");

    cr_assert_eq(f.out->n_roots, 4, "%u roots", f.out->n_roots);
    expect_root(&f.out->roots[0], HI_ROOT_TLS, tp0 - 128, 3, usable(A) + usable(B) + usable(G));
    cr_assert_eq(f.out->roots[0].tid, 100);
    expect_root(&f.out->roots[1], HI_ROOT_STACK, sp0 - 128, 1, usable(K));
    cr_assert_eq(f.out->roots[1].tid, 100);
    expect_root(&f.out->roots[2], HI_ROOT_STACK, sp1 - 128, 0, 0);
    cr_assert_eq(f.out->roots[2].tid, 101);
    expect_root(&f.out->roots[3], HI_ROOT_SHARED, 2, 1, usable(L));
    cr_assert_eq(f.out->roots[3].end, 3);
    cr_assert_eq(f.out->end.tls_roots, 1);
    cr_assert_eq(f.out->end.threads_with_sp, 2);
}

/* ---- the batched scan against a plain search ------------------------ */

#define RAND_BLK 40000u

static uint64_t rand_state = 0x853c49e6748fea9bull;

static uint64_t rand_next(void)
{
    rand_state = rand_state * 6364136223846793005ull + 1442695040888963407ull;
    return rand_state >> 17;
}

/* The block holding v, by a binary search of the whole table, or -1. */
static int64_t plain_find(const struct pl_blk *blk, uint64_t n, uintptr_t v)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (blk[mid].mem <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && v < blk[lo - 1].mem + pl_blk_usable(&blk[lo - 1]) ? (int64_t)(lo - 1) : -1;
}

/* A heap of 40,000 blocks of 32 bytes to 4 KiB in two runs MiBs apart
 * (two spans of the index), mmapped chunks among them, words of data and
 * pointers: to a block's start, inside it, to its last byte, one past its
 * end, into the gap, to the page before. The mark (the index, the queue
 * of words across blocks, popcnt or not) reaches exactly the blocks a
 * plain search of the table from the same roots reaches, and credits the
 * roots with their bytes. */
/* Marks a heap of nblk blocks in [base, base + region) whose one root
 * page is globals (a module's .data); the index must have been built
 * (the batched scan ran). */
static void mark_one_heap(struct fake *f, uint8_t *base, size_t region, uintptr_t *globals, struct pl_blk *blk,
                          uint64_t nblk)
{
    memset(f, 0, sizeof(*f));
    f->maps[0] = (struct pl_cmap){ .lo = (uintptr_t)base, .hi = (uintptr_t)base + region, .read = 1, .write = 1,
                                   .priv = 1, .anon = 1, .kind = PL_CMAP_HEAP };
    f->maps[1] = (struct pl_cmap){ .lo = (uintptr_t)globals, .hi = (uintptr_t)globals + PG, .read = 1, .write = 1 };
    f->in = calloc(1, sizeof(*f->in));
    cr_assert_not_null(f->in);
    f->in->globals[0].lo = (uintptr_t)globals;
    f->in->globals[0].hi = (uintptr_t)globals + PG;
    f->in->n_globals = 1;
    f->out = mmap(NULL, PL_CENSUS_OUT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(f->out != MAP_FAILED);
    f->cs = (struct pl_census){ .in = f->in, .out = f->out, .maps = f->maps, .nmaps = 2, .pagemap = -1, .blk = blk,
                                .nblk = nblk, .capblk = nblk };
    pl_census_mark(&f->cs);
    cr_assert_eq(f->out->end.status, 0, "%s", f->out->end.why);
    cr_assert_not_null(f->cs.index, "the index was built: the batched scan ran");
}

Test(census_mark, the_batched_scan_reaches_what_a_plain_search_reaches)
{
    size_t region = 72u << 20;
    uint8_t *base = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert(base != MAP_FAILED);
    static struct pl_blk blk[RAND_BLK];
    uintptr_t c = (uintptr_t)base + 4096, second = (uintptr_t)base + (32u << 20);
    for (unsigned i = 0; i < RAND_BLK; i++) {
        if (i == RAND_BLK / 2) {
            cr_assert(c < second - (2u << 20));
            c = second; /* a gap of over 1 MiB: a second span */
        }
        uint64_t r = rand_next() % 100, csize = r < 70 ? 32 + 16 * (rand_next() % 30) : 16 * (1 + rand_next() % 256);
        uint32_t flags = 0;
        if (csize < 32)
            csize = 32;
        if (rand_next() % 40 == 0) { /* an mmapped chunk: page-aligned, no borrowed prev_size */
            c = (c + 4095) & ~(uintptr_t)4095;
            csize = (csize + 4095) & ~(uint64_t)4095;
            flags = PL_BLK_MMAP;
        }
        put(c + 8, csize | (flags ? 2u : 1u));
        blk[i] = (struct pl_blk){ .mem = c + 16, .csize16 = (uint32_t)(csize / 16), .flags = flags };
        c += csize;
        if (rand_next() % 30 == 0)
            c += 16 * (rand_next() % 512); /* a free chunk's room, not in the table */
    }
    cr_assert(c < (uintptr_t)base + region);
    for (unsigned i = 0; i < RAND_BLK; i++) {
        uintptr_t *w = (uintptr_t *)blk[i].mem;
        uint64_t n = pl_blk_usable(&blk[i]) / 8;
        for (uint64_t k = 0; k < n; k++) {
            const struct pl_blk *to = &blk[rand_next() % RAND_BLK];
            uint64_t r = rand_next() % 100, size = pl_blk_usable(to);
            w[k] = r < 50 ? 0x6f6c6c6568206100ull + k                 /* text */
                 : r < 75 ? rand_next() % 5000                         /* numbers */
                 : r < 85 ? to->mem + (rand_next() % size)             /* inside */
                 : r < 88 ? to->mem                                    /* its start */
                 : r < 91 ? to->mem + size - 1                         /* its last byte */
                 : r < 94 ? to->mem + size                             /* one past its end */
                 : r < 97 ? (uintptr_t)base + (30u << 20) + rand_next() % (1u << 20) /* the gap */
                 : (uintptr_t)base + rand_next() % 4096;               /* before the first block */
            if (rand_next() % 6) /* five pointers in six made data (top bit set): the graph stays sparse */
                w[k] = w[k] < 5000 || (w[k] >> 8) == (0x6f6c6c6568206100ull >> 8) ? w[k] : w[k] ^ 0x8000000000000000ull;
        }
    }
    uintptr_t *globals = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(globals != MAP_FAILED);
    for (unsigned g = 0; g < 64; g++) /* a root word to 64 blocks of both spans */
        globals[g] = blk[(g * 7919u) % RAND_BLK].mem + 8 * (g % 2);

    /* the reference: what each root word reaches, by a plain search; a
     * block reached by two or more words is shared, one reached by one
     * word alone is that word's (the mark's grains done, kept for one
     * holder, must not hide a block of an earlier word from a later one) */
    enum { NROOT_WORDS = 128 };
    static uint8_t reached[RAND_BLK], by_this[RAND_BLK];
    static uint8_t nroots_of[RAND_BLK];
    static int16_t root_of[RAND_BLK];
    static uint32_t todo[RAND_BLK];
    uint32_t ntodo = 0;
    uint64_t want_blocks = 0, want_bytes = 0;
    for (unsigned g = 0; g < NROOT_WORDS; g++) {
        if (g == 64) { /* 64 more words, in pairs, to blocks P and R the first 64 leave unreached, both
                          pointing into a third such block Q: Q is the pair's shared block, reached by R
                          after P's root marked it as its own (its grains done for P's root only) */
            unsigned k = 64, got = 0, pick[3];
            for (unsigned i = 0; i < RAND_BLK && k < NROOT_WORDS; i += 7) {
                if (reached[i])
                    continue;
                pick[got++] = i;
                if (got < 3)
                    continue;
                got = 0;
                uintptr_t q = blk[pick[2]].mem;
                ((uintptr_t *)blk[pick[0]].mem)[0] = q + 8;
                ((uintptr_t *)blk[pick[1]].mem)[0] = q + 16;
                globals[k++] = blk[pick[0]].mem;
                globals[k++] = blk[pick[1]].mem + 8;
            }
            cr_assert_eq(k, NROOT_WORDS, "too few unreached blocks for the pairs");
        }
        memset(by_this, 0, sizeof(by_this));
        int64_t i = plain_find(blk, RAND_BLK, globals[g]);
        if (i >= 0) {
            by_this[i] = 1;
            todo[ntodo++] = (uint32_t)i;
        }
        while (ntodo) {
            uint32_t at = todo[--ntodo];
            const struct pl_blk *b = &blk[at];
            if (!reached[at]) {
                reached[at] = 1;
                want_blocks++;
                want_bytes += pl_blk_usable(b);
            }
            nroots_of[at] += nroots_of[at] < 255;
            root_of[at] = (int16_t)g;
            for (uint64_t k = 0; k < pl_blk_usable(b) / 8; k++) {
                int64_t j = plain_find(blk, RAND_BLK, ((const uintptr_t *)b->mem)[k]);
                if (j >= 0 && !by_this[j]) {
                    by_this[j] = 1;
                    todo[ntodo++] = (uint32_t)j;
                }
            }
        }
    }
    cr_assert_gt(want_blocks, 1000, "the heap's graph reaches %lu blocks: too few to test", (unsigned long)want_blocks);
    cr_assert_lt(want_blocks, RAND_BLK - 1000, "the heap's graph reaches %lu blocks: too many to test",
                 (unsigned long)want_blocks);

    struct fake f;
    mark_one_heap(&f, base, region, globals, blk, RAND_BLK);
    cr_assert_eq(f.cs.index->nspan, 2, "%lu spans", (unsigned long)f.cs.index->nspan);
    for (unsigned i = 0; i < RAND_BLK; i++)
        cr_assert_eq(!!(blk[i].flags & PL_BLK_MARK), reached[i], "block %u at %#lx: marked %d, reached %d", i,
                     (unsigned long)blk[i].mem, !!(blk[i].flags & PL_BLK_MARK), reached[i]);
    cr_assert_eq(f.out->end.unreachable_blocks, RAND_BLK - want_blocks);
    unsigned nshared = 0, nowned = 0, owners = 0;
    static uint8_t owner_seen[PL_CENSUS_MAX_ROOTS + 1];
    for (unsigned i = 0; i < RAND_BLK; i++) {
        if (!reached[i])
            continue;
        if (nroots_of[i] > 1) {
            cr_assert(blk[i].flags & PL_BLK_SHARED, "block %u: reached by %u root words, not shared (flags %#x)", i,
                      nroots_of[i], blk[i].flags);
            nshared++;
            continue;
        }
        uint32_t owner = blk[i].flags >> 8;
        cr_assert(!(blk[i].flags & PL_BLK_SHARED), "block %u: reached by one root word, shared", i);
        cr_assert(owner >= 1 && owner <= f.out->n_roots, "block %u: owner %u", i, owner);
        cr_assert_eq(f.out->roots[owner - 1].addr, (uintptr_t)&globals[root_of[i]],
                     "block %u: owned by the root at %#lx, reached by the word at %#lx alone", i,
                     (unsigned long)f.out->roots[owner - 1].addr, (unsigned long)&globals[root_of[i]]);
        owners += !owner_seen[owner];
        owner_seen[owner] = 1;
        nowned++;
    }
    cr_assert_gt(nshared, 100, "%u blocks shared: too few to test", nshared);
    cr_assert_gt(owners, 3, "%u roots own blocks: too few to test (%u owned)", owners, nowned);
    uint64_t got_blocks = 0, got_bytes = 0;
    for (unsigned r = 0; r < f.out->n_roots; r++) {
        got_blocks += f.out->roots[r].retained_blocks;
        got_bytes += f.out->roots[r].retained_bytes;
    }
    cr_assert_eq(got_blocks, want_blocks);
    cr_assert_eq(got_bytes, want_bytes);
    munmap(base, region);
}

/* The mark fetches ahead what it will read (census_mark.c: blocks down the
 * mark stack, the entries of a candidate's neighbours, make_groups' first
 * words): none of that reads past the table of blocks. The table here
 * ends where its mapping does, an inaccessible page after it; a list of
 * 1,020 blocks (48 bytes to 2 KiB: longer than what a block's first fetch
 * covers) from one global word, every other block leaked, the last one
 * held; the mark reaches the list exactly and credits it to the word. */
Test(census_mark, what_the_mark_fetches_ahead_stays_inside_the_table_of_blocks)
{
    enum { N = 1020, TABLE_PAGES = (N * sizeof(struct pl_blk) + PG - 1) / PG };
    uint8_t *room = mmap(NULL, (TABLE_PAGES + 1) * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(room != MAP_FAILED);
    cr_assert_eq(mprotect(room + TABLE_PAGES * PG, PG, PROT_NONE), 0);
    struct pl_blk *blk = (struct pl_blk *)(room + TABLE_PAGES * PG) - N; /* &blk[N]: the guard page */
    size_t region = 2u << 20;
    uint8_t *base = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(base != MAP_FAILED);
    uintptr_t c = (uintptr_t)base, held = 0;
    uint64_t want_blocks = 0, want_bytes = 0;
    for (unsigned i = 0; i < N; i++) {
        uint64_t csize = 48 + 16 * (rand_next() % 126);
        put(c + 8, csize | 1u);
        blk[i] = (struct pl_blk){ .mem = c + 16, .csize16 = (uint32_t)(csize / 16) };
        uintptr_t *w = (uintptr_t *)blk[i].mem;
        for (uint64_t k = 0; k < pl_blk_usable(&blk[i]) / 8; k++)
            w[k] = 0x6f6c6c6568206100ull + k; /* text */
        if (i % 2 == 1) { /* held: on the list (the last block, N - 1, too) */
            w[0] = held;
            held = blk[i].mem;
            want_blocks++;
            want_bytes += pl_blk_usable(&blk[i]);
        }
        c += csize;
    }
    cr_assert(c < (uintptr_t)base + region);
    uintptr_t *globals = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(globals != MAP_FAILED);
    globals[0] = held;

    struct fake f;
    mark_one_heap(&f, base, region, globals, blk, N);
    for (unsigned i = 0; i < N; i++)
        cr_assert_eq(!!(blk[i].flags & PL_BLK_MARK), i % 2, "block %u: marked %d", i, !!(blk[i].flags & PL_BLK_MARK));
    cr_assert_eq(f.out->end.in_use_blocks, N);
    cr_assert_eq(f.out->end.unreachable_blocks, N - want_blocks);
    cr_assert_eq(f.out->n_roots, 1);
    expect_root(&f.out->roots[0], HI_ROOT_GLOBAL, (uintptr_t)globals, want_blocks, want_bytes);
    munmap(base, region);
    munmap(globals, PG);
    munmap(room, (TABLE_PAGES + 1) * PG);
}
