/* payload_census_heap.c - the census's walk of glibc's heap
 * (payload/census/heap.h) on a heap made up in the test's own memory: a
 * [heap] of chunks in use and free up to a top chunk, a malloc_state
 * around its top in "libc's data", a chunk parked in a fastbin and a
 * mmapped chunk. The walk must find exactly the chunks in use, with their
 * sizes, and count the free bytes; a heap whose chunks do not chain, or
 * whose fastbin list does not check out, is refused with the reason (no
 * crash, no guess). */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "payload/census/heap.h"

#define PG 4096u
#define HEAP_BYTES (4u * PG)
#define MM_BYTES (2u * PG)
#define P 1u  /* PREV_INUSE */
#define MM 2u /* IS_MMAPPED */

static const struct hi_census_layout lay = HI_CENSUS_LAYOUT_GLIBC_X86_64;

/* The made-up process: [heap] at pages 0-3, libc's data (main_arena) at
 * page 5, a mmapped chunk at pages 7-8. */
struct fake {
    uint8_t *base;
    uintptr_t heap, arena, mm;
    struct pl_cmap maps[3];
    struct pl_census_in *in;
    struct pl_census_out *out;
    struct pl_census cs;
};

/* Chunk offsets in [heap]. */
enum {
    C0 = 0x000,  /* 0x30 in use */
    C1 = 0x030,  /* 0x50 in use */
    C2 = 0x080,  /* 0x100 free (C3's PREV_INUSE clear) */
    C3 = 0x180,  /* 0x40 in use */
    C4 = 0x1c0,  /* 0x30 laid out in use, parked in fastbin 1 */
    C5 = 0x1f0,  /* 0x20 free */
    C6 = 0x210,  /* 0x60 in use */
    C7 = 0x270,  /* 0x1000 in use: over a page boundary */
    TOP = 0x1270 /* the top chunk, to the end of [heap] */
};

static void put(uintptr_t at, uint64_t v)
{
    *(uint64_t *)at = v;
}

static void chunk(struct fake *f, unsigned off, uint64_t size_and_bits)
{
    put(f->heap + off + 8, size_and_bits);
}

static void set_fake(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->base = mmap(NULL, 10u * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(f->base != MAP_FAILED);
    f->heap = (uintptr_t)f->base;
    f->arena = (uintptr_t)f->base + 5u * PG;
    f->mm = (uintptr_t)f->base + 7u * PG;

    chunk(f, C0, 0x30 | P);
    chunk(f, C1, 0x50 | P);
    chunk(f, C2, 0x100 | P);
    put(f->heap + C3, 0x100); /* a free chunk's size at the end of it */
    chunk(f, C3, 0x40);
    chunk(f, C4, 0x30 | P);
    /* fastbin link, protected (glibc >= 2.32): the end of the list, 0 XOR
     * its own address >> 12 */
    put(f->heap + C4 + 16, (f->heap + C4 + 16) >> 12);
    chunk(f, C5, 0x20 | P);
    put(f->heap + C6, 0x20);
    chunk(f, C6, 0x60);
    chunk(f, C7, 0x1000 | P);
    chunk(f, TOP, (HEAP_BYTES - TOP) | P);

    uintptr_t a = f->arena;
    put(a + lay.top, f->heap + TOP);
    put(a + lay.system_mem, HEAP_BYTES);
    for (unsigned b = 0; b < 10; b++) /* empty bins point at themselves */
        put(a + lay.bins + 16u * b, a + lay.bins + 16u * b - 16u);
    put(a + lay.next, a); /* the only arena */
    put(a + lay.fastbins + 8u * 1u, f->heap + C4);

    put(f->mm, 0);
    put(f->mm + 8, MM_BYTES | MM);

    f->maps[0] = (struct pl_cmap){ .lo = f->heap, .hi = f->heap + HEAP_BYTES, .read = 1, .write = 1, .priv = 1,
                                   .anon = 1, .kind = PL_CMAP_HEAP };
    f->maps[1] = (struct pl_cmap){ .lo = f->arena, .hi = f->arena + PG, .read = 1, .write = 1, .priv = 1 };
    f->maps[2] = (struct pl_cmap){ .lo = f->mm, .hi = f->mm + MM_BYTES, .read = 1, .write = 1, .priv = 1, .anon = 1 };

    f->in = calloc(1, sizeof(*f->in));
    cr_assert_not_null(f->in);
    f->in->libc_data[0].lo = f->arena;
    f->in->libc_data[0].hi = f->arena + PG;
    f->in->n_libc_data = 1;
    f->out = mmap(NULL, PL_CENSUS_OUT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(f->out != MAP_FAILED);
    f->cs.in = f->in;
    f->cs.out = f->out;
    f->cs.maps = f->maps;
    f->cs.nmaps = 3;
    f->cs.pagemap = -1;
}

static void expect_block(const struct fake *f, uint64_t i, uintptr_t chunk_at, uint64_t csize, uint32_t flags)
{
    const struct pl_blk *b = &f->cs.blk[i];
    cr_assert_eq(b->mem, chunk_at + 16, "block %lu at %#lx, not %#lx", (unsigned long)i, (unsigned long)b->mem,
                 (unsigned long)(chunk_at + 16));
    cr_assert_eq((uint64_t)b->csize16 * 16u, csize, "block %lu: chunk of %#lx bytes, not %#lx", (unsigned long)i,
                 (unsigned long)b->csize16 * 16u, (unsigned long)csize);
    cr_assert_eq(b->flags, flags, "block %lu: flags %#x, not %#x", (unsigned long)i, b->flags, flags);
}

Test(census_heap, finds_exactly_the_chunks_in_use)
{
    struct fake f;
    set_fake(&f);
    cr_assert_eq(pl_census_walk(&f.cs), 0, "walk failed: %s", f.out->end.why);
    cr_assert_eq(f.cs.main_arena, f.arena);
    cr_assert_eq(f.cs.nblk, 7, "%lu blocks", (unsigned long)f.cs.nblk);
    expect_block(&f, 0, f.heap + C0, 0x30, 0);
    expect_block(&f, 1, f.heap + C1, 0x50, 0);
    expect_block(&f, 2, f.heap + C3, 0x40, 0);
    expect_block(&f, 3, f.heap + C4, 0x30, PL_BLK_FREE);
    expect_block(&f, 4, f.heap + C6, 0x60, 0);
    expect_block(&f, 5, f.heap + C7, 0x1000, 0);
    expect_block(&f, 6, f.mm, MM_BYTES, PL_BLK_MMAP);

    const struct hi_census_end *e = &f.out->end;
    cr_assert_eq(e->status, 0);
    /* free in the layout: C2, C5 and the top (fastbins are added to these
     * when the groups are made) */
    cr_assert_eq(e->free_blocks, 3);
    cr_assert_eq(e->free_bytes, 0x100 + 0x20 + (HEAP_BYTES - TOP), "free bytes %#lx", (unsigned long)e->free_bytes);
    cr_assert_eq(e->fastbin_blocks, 1);
    cr_assert_eq(e->fastbin_bytes, 0x30);
    cr_assert_eq(e->tcache_blocks, 0);
    cr_assert_eq(e->mmapped_blocks, 1);
    cr_assert_eq(e->mmapped_bytes, MM_BYTES - 16);
    /* a size word per chunk laid out in use, the mmapped chunk's header */
    cr_assert_eq(e->metadata_bytes, 6 * 8 + 16);
    cr_assert_eq(e->heap_bytes, HEAP_BYTES + MM_BYTES);
    cr_assert_eq(e->arenas, 1);
    cr_assert_eq(e->heaps, 1);

    /* Look-ups: the usable bytes are the chunk less its size word (the
     * next chunk's prev_size is lent to it), a mapping's less 16. */
    cr_assert_eq(pl_census_find(&f.cs, f.heap + C1 + 16), 1);
    cr_assert_eq(pl_census_find(&f.cs, f.heap + C1 + 16 + 0x50 - 8 - 1), 1);
    cr_assert_eq(pl_census_find(&f.cs, f.heap + C1 + 16 + 0x50 - 8), -1);
    cr_assert_eq(pl_census_find(&f.cs, f.heap + C2 + 16), -1, "a free chunk is no block");
    cr_assert_eq(pl_census_find(&f.cs, f.mm + MM_BYTES - 1), 6);
    cr_assert_eq(pl_census_find(&f.cs, f.mm + MM_BYTES), -1, "a mapping lends no prev_size");
}

static void expect_refused(struct fake *f, const char *why_part)
{
    int rc = pl_census_walk(&f->cs);
    cr_assert_lt(rc, 0, "a broken heap was walked (%lu blocks)", (unsigned long)f->cs.nblk);
    cr_assert_eq(f->out->end.status, rc);
    cr_assert_not_null(strstr(f->out->end.why, why_part), "why: %s", f->out->end.why);
}

Test(census_heap, a_size_past_the_end_of_heap_is_a_broken_chain)
{
    struct fake f;
    set_fake(&f);
    chunk(&f, C1, 0x50000 | P);
    expect_refused(&f, "do not chain");
}

Test(census_heap, a_size_not_a_multiple_of_16_is_a_broken_chain)
{
    struct fake f;
    set_fake(&f);
    chunk(&f, C3, 0x48); /* 0x40 bits: a size of 0x48 after the flags */
    expect_refused(&f, "do not chain");
}

Test(census_heap, a_chunk_smaller_than_the_minimum_is_a_broken_chain)
{
    struct fake f;
    set_fake(&f);
    chunk(&f, C6, 0x10); /* would loop or land mid-chunk */
    expect_refused(&f, "do not chain");
}

Test(census_heap, a_top_no_malloc_state_holds_is_refused)
{
    struct fake f;
    set_fake(&f);
    put(f.arena + lay.top, f.heap + C7);
    expect_refused(&f, "main_arena was not found");
}

Test(census_heap, a_fastbin_entry_of_the_wrong_size_is_refused)
{
    struct fake f;
    set_fake(&f);
    put(f.arena + lay.fastbins + 8u, f.heap + C1); /* a 0x50 chunk in the 0x30 list */
    put(f.heap + C1 + 16, (f.heap + C1 + 16) >> 12); /* which ends there */
    expect_refused(&f, "fastbin list does not check out");
}

Test(census_heap, a_fastbin_list_that_does_not_end_is_refused)
{
    struct fake f;
    set_fake(&f);
    /* C4 links to itself: a cycle (the list can have no more entries than
     * there are blocks) */
    put(f.heap + C4 + 16, (f.heap + C4) ^ ((f.heap + C4 + 16) >> 12));
    expect_refused(&f, "fastbin list does not check out");
}
