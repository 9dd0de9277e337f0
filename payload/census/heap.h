/* census_heap.h - the census child's picture of the heap: the process's
 * mappings, every glibc chunk, and which are in use.
 *
 * Everything here runs in the copy-on-write child (payload/census.c): no
 * locks, no malloc, only memory it maps itself and raw system calls. The
 * copy is frozen, so nothing moves while it is read; a read outside the
 * mappings listed in /proc/self/maps is never made (a fault would kill the
 * child, not the target, but would lose the census). */
#ifndef HI_PAYLOAD_CENSUS_HEAP_H
#define HI_PAYLOAD_CENSUS_HEAP_H

#include <stdint.h>

#include "payload/census/types.h"

struct pl_census_index;

enum pl_cmap_kind {
    PL_CMAP_OTHER = 0,
    PL_CMAP_HEAP,       /* [heap]: the main arena */
    PL_CMAP_STACK,      /* [stack] or a stack holding a known stack pointer */
    PL_CMAP_ARENA,      /* a non-main arena's heap */
    PL_CMAP_MMAPPED,    /* mmapped chunks */
    PL_CMAP_EXCLUDED,   /* the profiler's own */
};

struct pl_cmap {
    uintptr_t lo, hi;
    uint8_t read, write, priv, anon;
    uint8_t kind;       /* enum pl_cmap_kind */
    uint8_t pad[3];
};

enum pl_blk_flag {
    PL_BLK_MARK = 1u,     /* reached from a root */
    PL_BLK_FREE = 2u,     /* in a tcache or a fastbin: free, though laid out as used */
    PL_BLK_META = 4u,     /* the allocator's own (a tcache structure) */
    PL_BLK_MMAP = 8u,     /* a chunk that is a mapping of its own */
    PL_BLK_SAMPLED = 16u, /* its address was sampled since attach */
    PL_BLK_SHARED = 32u,  /* reachable from more than one root (census_mark.c) */
    /* bits 8-31: with MARK and not SHARED, the root that reaches it
     * (census_mark.c's owner ids) */
};

/* One chunk laid out as in use, sorted by address. */
struct pl_blk {
    uintptr_t mem;      /* what malloc returned */
    uint32_t csize16;   /* chunk size / 16 */
    uint32_t flags;     /* enum pl_blk_flag */
};

static inline uint64_t pl_blk_usable(const struct pl_blk *b)
{
    /* An in-use chunk lends its successor's prev_size field; a mapping
     * does not have one. */
    uint64_t cs = (uint64_t)b->csize16 * 16u;
    return (b->flags & PL_BLK_MMAP) ? cs - 16u : cs - 8u;
}

#define PL_CENSUS_MAX_MMAPPED 65536u

struct pl_census {
    const struct pl_census_in *in;
    struct pl_census_out *out;
    struct pl_cmap *maps;
    unsigned nmaps;
    struct pl_blk *blk;
    uint64_t nblk, capblk;
    struct pl_census_index *index; /* census_index.h: set once the walk is done; NULL before */
    uintptr_t arenas[1024];
    unsigned narenas;
    uintptr_t main_arena;
    struct pl_census_range *mm; /* mmapped chunks, by address (PL_CENSUS_MAX_MMAPPED) */
    struct pl_census_range skip[80]; /* the profiler's own ranges and the child's maps buffer */
    unsigned nskip;
    unsigned nmm;
    int mangled;        /* free-list pointers are protected (glibc >= 2.32) */
    int pagemap;        /* /proc/self/pagemap of the copy, or -1: which pages hold data */
    uint64_t pm_first, pm_n; /* the pagemap entries cached: pages pm_first.. */
    uint64_t pm[512];
    uint64_t untouched; /* bytes of anonymous mappings skipped: never touched, all zeros */
    struct hi_census_layout lay; /* struct malloc_state's offsets in use */
};

/* Sets out->end.status = -code and the why text; returns -code. */
int pl_census_fail(struct pl_census *cs, int code, const char *why);

/* Reads /proc/self/maps. 0 or -errno (via pl_census_fail). */
int pl_census_read_maps(struct pl_census *cs);

/* End of the profiler's own range holding addr, or 0 when addr is not
 * in one (mappings merge: a range of ours may share a line of maps with
 * the program's memory). */
uintptr_t pl_census_skip_end(const struct pl_census *cs, uintptr_t addr);

/* The mapping containing addr, or NULL. */
struct pl_cmap *pl_census_map_of(struct pl_census *cs, uintptr_t addr);

/* Walks every arena and mmapped chunk into cs->blk, counts free memory,
 * then takes tcache and fastbin chunks out of the in-use count. 0, or a
 * negative code with out->end.why saying what could not be walked. */
int pl_census_walk(struct pl_census *cs);

/* After the walk: marks what every root reaches, then fills out's roots
 * (retained bytes) and groups (mark.c; unit tests call it on a made-up
 * heap). */
void pl_census_mark(struct pl_census *cs);

/* Index of the in-use block whose memory holds addr, or -1. */
int64_t pl_census_find(const struct pl_census *cs, uintptr_t addr);

/* The first run of pages of [lo, hi) that may hold data, clipped to
 * [lo, hi), into *run_lo and *run_hi: 1, or 0 when there is none. A page
 * of a private anonymous mapping that the copy's /proc/self/pagemap shows
 * neither present nor swapped out was never written: it reads as zeros,
 * and reading it maps the zero page into the copy, one page-table entry
 * each (a 64 GiB MAP_NORESERVE mapping took 62 s and 128 MiB of page
 * tables to read that way). Without a readable pagemap all of [lo, hi) is
 * one run. */
int pl_census_data_run(struct pl_census *cs, uintptr_t lo, uintptr_t hi, uintptr_t *run_lo, uintptr_t *run_hi);

/* Memory of the child's own: anonymous, private, MAP_NORESERVE. */
void *pl_census_map(uint64_t bytes);

#endif /* HI_PAYLOAD_CENSUS_HEAP_H */
