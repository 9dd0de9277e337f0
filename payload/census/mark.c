/* census_mark.c - what the roots reach, and the groups the report shows.
 *
 * A conservative mark as LeakSanitizer and chap count it: any aligned word
 * of a root or of a reached block whose value lies anywhere inside an
 * in-use block (an interior pointer too) keeps that block. Roots, in this
 * order: the writable data of every module (.data, .bss, relro; each word
 * a root of its own, named later by its symbol), each thread's stack from
 * the stack pointer it had (read from /proc/self/task/TID/syscall before
 * the fork: known for threads blocked in a system call; 128 bytes of red
 * zone below it), then every other writable private mapping (anonymous, or
 * of a file: its written pages are the program's) that
 * is not heap (stacks of running threads, whole; the main thread's static
 * TLS when its thread pointer is not known; memory runtimes map
 * themselves). When the cli stopped the threads for the fork (ptrace,
 * CENSUS_REGS), each thread's static TLS and TCB come before its stack
 * and its 16 general registers after it; otherwise a block that only a
 * running thread's register holds counts unreachable.
 *
 * Retained bytes are what a root alone reaches: roots are marked one after
 * another, each block keeping the id of the root that reached it; a later
 * root that reaches a block of another root's makes it shared, and every
 * block below it too (the other root reaches them through it). A root is
 * credited with the blocks only it reaches (what clearing it would free,
 * as a dominator tree counts it, but for blocks only a shared one holds),
 * and the shared ones are one record of their own (HI_ROOT_SHARED), so
 * that memory many roots reach (node's Buffers, held from V8's heap and a
 * global) is not credited to whichever root came first. A thread's
 * static TLS, stack and registers are one holder: what two of them reach
 * is credited to the first, not shared. Each block is marked at most twice
 * (owned, then shared). */
#include "payload/census/heap.h"
#include "payload/census/index.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "payload/record/record.h"
#include "payload/census/kernel.h"
#include "payload/census/uncopied.h"
#include "payload/sys/sys.h"

#define MARK_STACK_MAX (64ull << 20) /* entries; the array is MAP_NORESERVE */
#define SHARED_PAIRS 64u /* shared records, one per pair of roots (the largest pairs) */

struct marker {
    struct pl_census *cs;
    uint64_t *stack;
    uint64_t depth;
    uintptr_t lo, hi; /* address span of the blocks */
    struct hi_census_root *acc;
    uint32_t owner;   /* the id of the root being marked (owner_of) */
    uint32_t holder;  /* who holds through it: a thread's TLS, stack and
                         registers are one holder (what a thread's stack and
                         its TLS both reach is the thread's, not shared) */
    uint32_t *holder_of; /* by owner id: its holder (PL_CENSUS_MAX_ROOTS + 2) */
    int made_shared;  /* the root being marked made blocks shared: keep its
                         record, which the shared records name */
    struct hi_census_root shared[SHARED_PAIRS]; /* by the pair of roots that
                         share (addr, end: their ids); the last one for any
                         pair the table has no room for (ids 0) */
    unsigned nshared;
    int popcnt;       /* the CPU has popcnt: scan_block_popcnt */
    uint64_t *done_log; /* blocks marked as the current holder's own since it
                           became current: their done bits (index.h) hold
                           for this holder only */
    uint64_t ndone_log;
};

#define OWNER_SHIFT 8u
#define OWNER_SPILL 0xffffffu /* a root past the table's end (new_root's spill) */
#define SHARED_ENTRY (1ull << 63) /* a mark-stack entry whose block is shared */

/* The owner id of a root record: its index in out->roots + 1, or
 * OWNER_SPILL for a record that is no entry of the table (spill). */
static uint32_t owner_of(const struct pl_census_out *out, const struct hi_census_root *r)
{
    if (r >= out->roots && r < out->roots + PL_CENSUS_MAX_ROOTS)
        return (uint32_t)(r - out->roots) + 1u;
    return OWNER_SPILL;
}

#define THREAD_HOLDER 0x1000000u /* + the thread's index: above every owner id */

static void forget_done(struct marker *m);

static void set_acc_of(struct marker *m, struct hi_census_root *r, uint32_t owner, uint32_t holder)
{
    if (holder != m->holder)
        forget_done(m); /* what the last holder owns is no longer done for this one */
    m->acc = r;
    m->owner = owner;
    m->holder = holder;
    m->made_shared = 0;
    if (owner <= PL_CENSUS_MAX_ROOTS + 1u)
        m->holder_of[owner] = holder;
}

static void set_acc(struct marker *m, struct hi_census_root *r, uint32_t owner)
{
    set_acc_of(m, r, owner, owner);
}

/* The holder of a block's owner id. */
static uint32_t holder_of_owner(const struct marker *m, uint32_t owner)
{
    return owner <= PL_CENSUS_MAX_ROOTS + 1u ? m->holder_of[owner] : owner;
}

/* The shared record of the pair (first, second): root ids, 0 unknown. */
static struct hi_census_root *shared_of(struct marker *m, uint32_t first, uint32_t second)
{
    uint64_t a = first == OWNER_SPILL ? 0 : first, b = second == OWNER_SPILL ? 0 : second;
    for (unsigned k = 0; k < m->nshared; k++)
        if (m->shared[k].addr == a && m->shared[k].end == b)
            return &m->shared[k];
    if (m->nshared < SHARED_PAIRS - 1) {
        struct hi_census_root *r = &m->shared[m->nshared++];
        r->addr = a;
        r->end = b;
        return r;
    }
    return &m->shared[SHARED_PAIRS - 1]; /* any other pair: ids 0 */
}

/* ---- grains done ---------------------------------------------------
 * On a heap of object graphs most words point into blocks marked already
 * (the bench's heap of pointers: 512 words a block, 99.8% of them), and
 * each such word went through the whole look-up (span, page entry, two
 * popcounts, block entry, end check, mark and owner checks: ~95
 * instructions and two cache misses) to change nothing. The index's done
 * bitmap (index.h) has a bit per 16 bytes, set here once every block
 * reaching into those 16 bytes is one such a word changes nothing for,
 * given the holder being marked: the queue's first pass drops a word
 * whose grain's bit is set (a load from a table of 1/128 of the heap)
 * before its page or block entry is read. 16 bytes: a block's first 16
 * are its own, so a pointer to a small block's start is dropped even
 * when the block before it is never marked. At most two blocks reach
 * into a grain (index.c: at most one starts in 32 bytes), block i and
 * i - 1 or i + 1. A block owned by the holder is done
 * for that holder only: the blocks so marked are logged and their bits
 * cleared when another holder becomes current; shared, free and the
 * allocator's blocks are done for good (set_done says which bits rest on
 * what). A word of a shared block's
 * (below_shared) does not use the bits: it makes the holder's own blocks
 * shared. */

/* Nothing a word pointing into block j would do (reach_block's returns
 * for below_shared 0); for_good: whatever the holder. */
static int blk_done(const struct marker *m, uint64_t j, int for_good)
{
    uint32_t f = m->cs->blk[j].flags, owner = f >> OWNER_SHIFT;
    if (f & (PL_BLK_FREE | PL_BLK_META | PL_BLK_SHARED))
        return 1;
    return !for_good && (f & PL_BLK_MARK) &&
           ((owner == m->owner && owner != OWNER_SPILL) || holder_of_owner(m, owner) == m->holder);
}

static uintptr_t blk_end_of(const struct pl_blk *b)
{
    return b->mem + pl_blk_usable(b);
}

/* Bits [a, b] of the done bitmap set (or cleared). */
static void done_bits(uint64_t *done, uint64_t a, uint64_t b, int set)
{
    for (uint64_t g = a; g <= b;) {
        uint64_t w = g >> 6, hi = (w << 6) + 63 < b ? (w << 6) + 63 : b;
        uint64_t mask = (~0ull >> (63u - (unsigned)(hi & 63))) & (~0ull << (g & 63));
        done[w] = set ? done[w] | mask : done[w] & ~mask;
        g = hi + 1;
    }
}

/* Block i just became done (blk_done): its grains' bits set, those at its
 * ends only when the neighbour reaching into them is done too. for_good:
 * i is shared, its bits are never cleared: a neighbour counts only when
 * it is done for good too (one owned by the holder may be of an earlier
 * turn of the same holder, a thread's TLS before its stack, and in no
 * log). Otherwise i is in the log, and every bit set here is i's. */
static __attribute__((noinline)) void set_done(struct marker *m, uint64_t i, int for_good)
{
    const struct pl_census_index *ix = m->cs->index;
    if (!ix)
        return;
    const struct pl_blk *blk = m->cs->blk;
    const struct pl_census_span *sp = pl_census_index_span(ix, blk[i].mem);
    if (!sp)
        return;
    uintptr_t mem = blk[i].mem, end = blk_end_of(&blk[i]);
    uint64_t gf = mem >> PL_CENSUS_INDEX_DONE_SHIFT, gl = (end - 1) >> PL_CENSUS_INDEX_DONE_SHIFT;
    int first_ok = !(i > 0 && blk_end_of(&blk[i - 1]) > gf << PL_CENSUS_INDEX_DONE_SHIFT && !blk_done(m, i - 1, for_good));
    int last_ok = !(i + 1 < m->cs->nblk && blk[i + 1].mem < (gl + 1) << PL_CENSUS_INDEX_DONE_SHIFT &&
                    !blk_done(m, i + 1, for_good));
    if (gf == gl) { /* one grain: both neighbours may reach into it */
        if (first_ok && last_ok)
            done_bits(ix->done, gf + sp->done_bias, gf + sp->done_bias, 1);
        return;
    }
    if (gl - gf > 1)
        done_bits(ix->done, gf + 1 + sp->done_bias, gl - 1 + sp->done_bias, 1);
    if (first_ok)
        done_bits(ix->done, gf + sp->done_bias, gf + sp->done_bias, 1);
    if (last_ok)
        done_bits(ix->done, gl + sp->done_bias, gl + sp->done_bias, 1);
}

/* Another holder is current: the bits of the blocks the last one marked
 * as its own cleared (those made shared since too: their ends' bits may
 * rest on a neighbour the holder owns). */
static void forget_done(struct marker *m)
{
    const struct pl_census_index *ix = m->cs->index;
    if (ix && m->ndone_log > ix->done_words / 16) { /* cheaper to clear it all (shared blocks' bits too) */
        memset(ix->done, 0, ix->done_words * sizeof(uint64_t));
        m->ndone_log = 0;
        return;
    }
    for (uint64_t k = 0; ix && k < m->ndone_log; k++) {
        const struct pl_blk *b = &m->cs->blk[m->done_log[k]];
        const struct pl_census_span *sp = pl_census_index_span(ix, b->mem);
        if (sp)
            done_bits(ix->done, pl_census_index_grain(sp, b->mem), pl_census_index_grain(sp, blk_end_of(b) - 1), 0);
    }
    m->ndone_log = 0;
}

/* b, reached by a root other than its owner: no longer its owner's. */
static void make_shared(struct marker *m, struct pl_blk *b)
{
    uint32_t owner = b->flags >> OWNER_SHIFT;
    uint64_t size = pl_blk_usable(b);
    struct pl_census_out *out = m->cs->out;
    if (owner != OWNER_SPILL && owner >= 1 && owner <= out->n_roots) {
        struct hi_census_root *r = &out->roots[owner - 1];
        r->retained_blocks -= r->retained_blocks ? 1 : 0;
        r->retained_bytes -= r->retained_bytes >= size ? size : r->retained_bytes;
    } else if (owner == m->owner && m->acc) { /* the global word being marked (not yet an entry) */
        m->acc->retained_blocks -= m->acc->retained_blocks ? 1 : 0;
        m->acc->retained_bytes -= m->acc->retained_bytes >= size ? size : m->acc->retained_bytes;
    }
    b->flags = (b->flags & ((1u << OWNER_SHIFT) - 1)) | PL_BLK_SHARED;
    struct hi_census_root *sh = shared_of(m, owner, m->owner);
    sh->retained_blocks++;
    sh->retained_bytes += size;
    m->made_shared = 1;
    set_done(m, (uint64_t)(b - m->cs->blk), 1);
}

static int in_image(const struct pl_census_in *in, uintptr_t v);

/* v, a word of a root (or of a block the root reaches: below_shared when
 * that block is shared, so that everything under it is reachable from
 * another root too). */
static inline __attribute__((always_inline)) void reach_block(struct marker *m, int64_t i, int below_shared);

static void reach_from(struct marker *m, uintptr_t v, int below_shared)
{
    if (v < m->lo || v >= m->hi)
        return;
    int64_t i = m->cs->index ? pl_census_index_find(m->cs, v) : pl_census_find(m->cs, v);
    if (i >= 0)
        reach_block(m, i, below_shared);
}

/* Block i, which a word reached. */
static inline __attribute__((always_inline)) void reach_block(struct marker *m, int64_t i, int below_shared)
{
    struct pl_blk *b = &m->cs->blk[i];
    if (b->flags & (PL_BLK_FREE | PL_BLK_META | PL_BLK_SHARED))
        return;
    if (!(b->flags & PL_BLK_MARK)) {
        b->flags = (b->flags & ((1u << OWNER_SHIFT) - 1)) | PL_BLK_MARK | (m->owner << OWNER_SHIFT);
        m->acc->retained_blocks++;
        m->acc->retained_bytes += pl_blk_usable(b);
        __builtin_prefetch((const void *)b->mem); /* its words are read soon (drain_body) */
        if (m->depth < MARK_STACK_MAX)
            m->stack[m->depth++] = (uint64_t)i;
        if (m->done_log) {
            m->done_log[m->ndone_log++] = (uint64_t)i;
            set_done(m, (uint64_t)i, 0);
        }
        return;
    }
    uint32_t owner = b->flags >> OWNER_SHIFT;
    /* the common case first, no table read: the block is this root's own
     * (a spilled root's id is every spilled root's: asked the table) */
    if (!below_shared && ((owner == m->owner && owner != OWNER_SPILL) || holder_of_owner(m, owner) == m->holder))
        return; /* this root's already, or its thread's */
    make_shared(m, b);
    if (m->depth < MARK_STACK_MAX)
        m->stack[m->depth++] = (uint64_t)i | SHARED_ENTRY;
}

static void reach(struct marker *m, uintptr_t v)
{
    reach_from(m, v, 0);
}

/* A word of a heap of pointers costs two cache misses in its look-up, the
 * page's entry and the block's, both at random places of tables of
 * megabytes: looked up one after the other, the CPU waits on one miss at
 * a time. So the words of the blocks off the mark stack that fall inside
 * the blocks' address range (one subtraction and compare a word, no
 * branch: on a heap of text and numbers most words end there) are queued,
 * across blocks, and the queue is looked up in passes once it holds
 * QUEUE_FLUSH of them: their page entries found and fetched, then their
 * blocks' entries from the pages, then each is checked and marked. Every
 * fetch of a pass is under way before the next pass reads the first of
 * them; a heap of mostly data gives a few words a block, so a queue per
 * block (last session's ring, 16 words ahead in the block) waited on
 * each. */
#define QUEUE 256u
#define QUEUE_FLUSH 64u
#define CHUNK 32u /* words filtered between checks of the queue's room */

struct queue {
    uintptr_t val[QUEUE];
    const struct pl_census_page *pg[QUEUE];
    int64_t cand[QUEUE];
    uint8_t shared[QUEUE]; /* the word's block is shared: below_shared */
    unsigned n;
};

/* The span last hit, in locals: the arrays the passes write could alias
 * a span's fields, which the compiler would then read again each word. */
struct span_hit {
    uintptr_t lo, width;
    uintptr_t page_bias; /* the page table's address less lo's page's offset in it */
    uintptr_t done_bias; /* the span's (index.h) */
};

static inline void span_hit_set(struct span_hit *h, const struct pl_census_span *sp)
{
    h->lo = sp->lo;
    h->width = sp->hi - sp->lo;
    h->page_bias = (uintptr_t)sp->page - (sp->lo >> PL_CENSUS_INDEX_PAGE_SHIFT) * sizeof(*sp->page);
    h->done_bias = sp->done_bias;
}

/* v's page entry (v inside the blocks' range), from the span last hit
 * when v is in it (a heap is one or a few spans, and neighbouring words
 * point near each other), else a search of the spans; NULL: no span. */
static inline const struct pl_census_page *page_of(const struct pl_census_index *ix, struct span_hit *h, uintptr_t v)
{
    if (v - h->lo >= h->width) {
        const struct pl_census_span *sp = pl_census_index_span(ix, v);
        if (!sp)
            return NULL;
        span_hit_set(h, sp);
    }
    return (const struct pl_census_page *)(h->page_bias + (v >> PL_CENSUS_INDEX_PAGE_SHIFT) * sizeof(struct pl_census_page));
}

/* The queued words looked up and their blocks reached (which may push
 * blocks on the mark stack); the queue left empty. Always inlined into
 * the two drains below, one of them built for CPUs with popcnt: without
 * it each popcount is a call into libgcc (a quarter of the scan's
 * instructions). */
static inline __attribute__((always_inline)) void flush_body(struct marker *m, struct queue *q, struct span_hit *hit)
{
    const struct pl_census_index *ix = m->cs->index;
    const struct pl_blk *blk = m->cs->blk;
    const uint64_t *done = ix->done;
    unsigned np = 0;
    /* The words' done bits fetched first, all at once: the bitmap is 1/128
     * of the heap and each word's bit a miss of its own (a fifth of the
     * mixed heap's scan went waiting on them, one after the other). */
    for (unsigned j = 0; j < q->n; j++) {
        uintptr_t v = q->val[j];
        if (v - hit->lo < hit->width)
            __builtin_prefetch(&done[((v >> PL_CENSUS_INDEX_DONE_SHIFT) + hit->done_bias) >> 6]);
    }
    for (unsigned j = 0; j < q->n; j++) {
        uintptr_t v = q->val[j];
        if (v - hit->lo < hit->width && !q->shared[j]) { /* a grain done: nothing to do (the drop of
                                                             most words of a heap of pointers) */
            uint64_t g = (v >> PL_CENSUS_INDEX_DONE_SHIFT) + hit->done_bias;
            if ((done[g >> 6] >> (g & 63)) & 1)
                continue;
        }
        const struct pl_census_page *p = page_of(ix, hit, q->val[j]);
        if (!p)
            continue;
        q->val[np] = q->val[j];
        q->shared[np] = q->shared[j];
        q->pg[np] = p;
        __builtin_prefetch(p);
        np++;
    }
    for (unsigned j = 0; j < np; j++) {
        q->cand[j] = pl_census_index_candidate(q->pg[j], q->val[j]);
        __builtin_prefetch(&blk[q->cand[j] < 0 ? 0 : q->cand[j]]);
        /* and its neighbours' (another line one time in two): the block
         * may be the one before (pl_census_index_resolve), and set_done
         * reads both neighbours of a block it marks (87% of its time went
         * waiting on them) */
        __builtin_prefetch(&blk[q->cand[j] < 1 ? 0 : q->cand[j] - 1]);
        __builtin_prefetch(&blk[q->cand[j] < 0 ? 0 : q->cand[j]] + 1);
    }
    q->n = 0;
    for (unsigned j = 0; j < np; j++) {
        int64_t i = pl_census_index_resolve(m->cs, q->cand[j], q->val[j]);
        if (i >= 0)
            reach_block(m, i, q->shared[j]);
    }
}

/* The blocks' own words: the mark reaches blocks all over the heap, and
 * the first read of each block's words waited on memory (60% of the mixed
 * heap's scan, on a load of the block's words). So a popped block's
 * successor AHEAD places down the stack has its first AHEAD_LINES cache
 * lines fetched while this one is scanned (blocks pushed meanwhile come
 * first: reach_block fetches a block's first line as it pushes it), and
 * the hardware's stream prefetch takes over past them. Measured on
 * census_scan_bench's mixed heap: 1, 2, 3 and 4 blocks ahead, 4, 16 and
 * 32 lines: 2 and 16 best. */
#define AHEAD 2u
#define AHEAD_LINES 16u

static inline void prefetch_block(const struct pl_blk *b)
{
    uintptr_t p = b->mem & ~(uintptr_t)63, end = b->mem + pl_blk_usable(b);
    for (unsigned k = 0; k < AHEAD_LINES && p < end; k++, p += 64)
        __builtin_prefetch((const void *)p);
}

/* The mark stack emptied, with the index: each block's words queued. */
static inline __attribute__((always_inline)) void drain_body(struct marker *m)
{
    struct queue q;
    struct span_hit hit;
    span_hit_set(&hit, &m->cs->index->span[0]);
    uintptr_t lo = m->lo, width = m->hi - m->lo;
    q.n = 0;
    for (;;) {
        if (!m->depth) {
            if (!q.n)
                return;
            flush_body(m, &q, &hit);
            continue;
        }
        uint64_t e = m->stack[--m->depth];
        const struct pl_blk *b = &m->cs->blk[e & ~SHARED_ENTRY];
        const uintptr_t *w = (const uintptr_t *)b->mem;
        uint64_t n = pl_blk_usable(b) / sizeof(uintptr_t);
        uint8_t shared = (e & SHARED_ENTRY) != 0;
        if (m->depth >= AHEAD)
            prefetch_block(&m->cs->blk[m->stack[m->depth - AHEAD] & ~SHARED_ENTRY]);
        for (uint64_t at = 0; at < n; at += CHUNK) {
            if (q.n > QUEUE - CHUNK)
                flush_body(m, &q, &hit);
            if (at + AHEAD_LINES * 8 < n) /* a block longer than what prefetch_block fetched: its
                                               next lines, as far ahead (the pointers' 4 KiB blocks) */
                for (unsigned l = 0; l < CHUNK / 8; l++)
                    __builtin_prefetch(&w[at + AHEAD_LINES * 8 + l * 8]);
            unsigned cnt = n - at < CHUNK ? (unsigned)(n - at) : CHUNK, k = q.n;
            for (unsigned j = 0; j < cnt; j++) { /* the common word, no pointer: no branch */
                uintptr_t v = w[at + j];
                q.val[k] = v;
                q.shared[k] = shared;
                k += v - lo < width;
            }
            q.n = k;
        }
        if (q.n >= QUEUE_FLUSH)
            flush_body(m, &q, &hit);
    }
}

static void drain_plain(struct marker *m)
{
    drain_body(m);
}

__attribute__((target("popcnt"))) static void drain_popcnt(struct marker *m)
{
    drain_body(m);
}

static int cpu_has_popcnt(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_POPCNT);
}

static void drain(struct marker *m)
{
    if (m->cs->index && m->popcnt) {
        drain_popcnt(m);
        return;
    }
    if (m->cs->index) {
        drain_plain(m);
        return;
    }
    while (m->depth) { /* no index (no memory for it): each word searched in the whole table */
        uint64_t e = m->stack[--m->depth];
        const struct pl_blk *b = &m->cs->blk[e & ~SHARED_ENTRY];
        const uintptr_t *w = (const uintptr_t *)b->mem;
        uint64_t n = pl_blk_usable(b) / sizeof(uintptr_t);
        for (uint64_t k = 0; k < n; k++)
            reach_from(m, w[k], (e & SHARED_ENTRY) != 0);
    }
}

static void scan_range(struct marker *m, uintptr_t lo, uintptr_t hi)
{
    lo = (lo + 7) & ~(uintptr_t)7;
    for (const uintptr_t *w = (const uintptr_t *)lo; (uintptr_t)(w + 1) <= hi; w++) {
        if (((uintptr_t)w & 4095) == 0) { /* ranges of ours are page-aligned */
            uintptr_t skip = pl_census_skip_end(m->cs, (uintptr_t)w);
            if (skip) {
                w = (const uintptr_t *)((skip + 7) & ~(uintptr_t)7) - 1;
                continue;
            }
        }
        reach(m, *w);
        drain(m);
    }
}

static struct hi_census_root *new_root(struct pl_census_out *out, struct hi_census_root *spill)
{
    if (out->n_roots == PL_CENSUS_MAX_ROOTS)
        return spill;
    struct hi_census_root *r = &out->roots[out->n_roots++];
    memset(r, 0, sizeof(*r));
    return r;
}

static int excluded(const struct pl_census_in *in, uintptr_t lo, uintptr_t hi)
{
    for (unsigned x = 0; x < in->n_exclude; x++)
        if (lo < in->exclude[x].hi && in->exclude[x].lo < hi)
            return 1;
    return 0;
}

/* Globals: one root per word that reaches something new. */
static void mark_globals(struct marker *m)
{
    const struct pl_census_in *in = m->cs->in;
    struct pl_census_out *out = m->cs->out;
    struct hi_census_root word_acc, spill;
    memset(&spill, 0, sizeof(spill));
    spill.kind = HI_ROOT_GLOBAL;
    /* main_arena (in libc's .data) is no root: its bins, fastbins and top
     * hold free chunks' headers, and a chunk's header is the last word of
     * the block before it, so a leaked block before a binned chunk looked
     * held by libc (e2e census_binhead). Its other words (next, the
     * counters) point at no block. */
    uintptr_t arena_lo = m->cs->main_arena, arena_hi = arena_lo ? arena_lo + m->cs->lay.size : 0;
    for (unsigned g = 0; g < in->n_globals; g++) {
        uintptr_t lo = (in->globals[g].lo + 7) & ~(uintptr_t)7, hi = in->globals[g].hi;
        if (excluded(in, lo, hi))
            continue;
        uintptr_t run_lo, run_hi = 0;
        for (uintptr_t p = lo; p + 8 <= hi; p += 8) {
            struct pl_cmap *cm = pl_census_map_of(m->cs, p);
            if (!cm || !cm->read) { /* a hole: skip to the next mapping */
                unsigned k = 0;
                while (k < m->cs->nmaps && m->cs->maps[k].lo <= p)
                    k++;
                if (k == m->cs->nmaps)
                    break;
                p = m->cs->maps[k].lo - 8;
                continue;
            }
            if (p >= run_hi) { /* pages never written hold no pointer of the program's */
                uintptr_t end = cm->hi < hi ? cm->hi : hi;
                if (!pl_census_data_run(m->cs, p, end, &run_lo, &run_hi)) {
                    p = end - 8;
                    run_hi = end;
                    continue;
                }
                p = run_lo;
            }
            if (p >= arena_lo && p < arena_hi) { /* main_arena: glibc's own words */
                p = arena_hi - 8;
                continue;
            }
            memset(&word_acc, 0, sizeof(word_acc));
            /* the id of the entry this word gets if it reaches something */
            set_acc(m, &word_acc, out->n_roots < PL_CENSUS_MAX_ROOTS ? out->n_roots + 1u : OWNER_SPILL);
            reach(m, *(const uintptr_t *)p);
            const struct pl_blk *via = m->depth ? &m->cs->blk[m->stack[m->depth - 1]] : NULL;
            uint64_t via_fw = via ? *(const uintptr_t *)via->mem : 0, via_size = via ? pl_blk_usable(via) : 0;
            drain(m);
            if (!word_acc.retained_blocks && !m->made_shared)
                continue;
            struct hi_census_root *r = new_root(out, &spill);
            if (r == &spill) {
                spill.retained_blocks += word_acc.retained_blocks;
                spill.retained_bytes += word_acc.retained_bytes;
                continue;
            }
            r->kind = HI_ROOT_GLOBAL;
            r->addr = p;
            r->end = p + 8;
            r->via_first_word = in_image(in, via_fw) ? via_fw : 0;
            r->via_size = via_size;
            r->retained_blocks = word_acc.retained_blocks;
            r->retained_bytes = word_acc.retained_bytes;
        }
    }
    if (spill.retained_blocks && out->n_roots) /* table full: fold into the last */
        out->roots[out->n_roots - 1].retained_bytes += spill.retained_bytes;
    m->acc = NULL; /* word_acc goes out of scope */
}

/* The static TLS and TCB range mark_tls scans for th; 0 when none. */
static int tls_range(const struct marker *m, const struct pl_census_thread *th, uintptr_t *lo_out, uintptr_t *hi_out)
{
    const struct pl_census_in *in = m->cs->in;
    if (in->tls_lo >= in->tls_hi || !th->has_regs || !th->tp)
        return 0;
    struct pl_cmap *cm = pl_census_map_of(m->cs, th->tp);
    if (!cm || !cm->read || cm->kind == PL_CMAP_EXCLUDED)
        return 0;
    uintptr_t lo = th->tp + (uintptr_t)in->tls_lo, hi = th->tp + (uintptr_t)in->tls_hi;
    if (lo < cm->lo || lo > th->tp)
        lo = cm->lo;
    if (hi > cm->hi)
        hi = cm->hi;
    *lo_out = lo;
    *hi_out = hi;
    return 1;
}

static void mark_stacks(struct marker *m)
{
    const struct pl_census_in *in = m->cs->in;
    struct hi_census_end *e = &m->cs->out->end;
    struct hi_census_root spill;
    /* threads past the table count too: their registers and TLS are not
     * roots, their stacks are scanned whole as private memory */
    e->threads = in->n_threads + in->n_threads_unlisted;
    for (unsigned t = 0; t < in->n_threads; t++) {
        const struct pl_census_thread *th = &in->threads[t];
        if (!th->has_sp)
            continue;
        struct pl_cmap *cm = pl_census_map_of(m->cs, th->sp);
        if (!cm || !cm->read || !cm->write || cm->kind == PL_CMAP_EXCLUDED)
            continue;
        e->threads_with_sp++;
        uintptr_t lo = th->sp - 128 >= cm->lo ? th->sp - 128 : cm->lo;
        struct hi_census_root *r = new_root(m->cs->out, &spill);
        memset(r, 0, sizeof(*r));
        r->kind = HI_ROOT_STACK;
        r->tid = th->tid;
        r->addr = lo;
        r->end = cm->hi;
        memcpy(r->thread, th->name, sizeof(r->thread));
        set_acc_of(m, r, owner_of(m->cs->out, r), THREAD_HOLDER + t);
        /* The thread's static TLS and TCB at the top of its stack were a
         * root of their own (mark_tls): scanned again here, the same
         * words would make what they hold shared with itself. */
        uintptr_t tls_lo, tls_hi;
        if (tls_range(m, th, &tls_lo, &tls_hi) && tls_lo < cm->hi && tls_hi > lo) {
            if (tls_lo > lo)
                scan_range(m, lo, tls_lo);
            if (tls_hi < cm->hi)
                scan_range(m, tls_hi, cm->hi);
        } else {
            scan_range(m, lo, cm->hi);
        }
        e->root_bytes += cm->hi - lo;
        cm->kind = PL_CMAP_STACK;
    }
}

/* Each thread's static TLS and TCB, from the thread pointer the cli read
 * (x86_64: static TLS lies below it, the TCB with the dtv and
 * pthread_setspecific's values above): a root of its own, before the
 * stack it sits at the top of (threads other than the main one). */
static void mark_tls(struct marker *m)
{
    const struct pl_census_in *in = m->cs->in;
    struct hi_census_root spill;
    if (in->tls_lo >= in->tls_hi)
        return;
    for (unsigned t = 0; t < in->n_threads; t++) {
        const struct pl_census_thread *th = &in->threads[t];
        if (!th->has_regs || !th->tp)
            continue;
        struct pl_cmap *cm = pl_census_map_of(m->cs, th->tp);
        if (!cm || !cm->read || cm->kind == PL_CMAP_EXCLUDED)
            continue;
        uintptr_t lo = th->tp + (uintptr_t)in->tls_lo, hi = th->tp + (uintptr_t)in->tls_hi;
        if (lo < cm->lo || lo > th->tp)
            lo = cm->lo;
        if (hi > cm->hi)
            hi = cm->hi;
        struct hi_census_root *r = new_root(m->cs->out, &spill);
        memset(r, 0, sizeof(*r));
        r->kind = HI_ROOT_TLS;
        r->tid = th->tid;
        r->addr = lo;
        r->end = hi;
        memcpy(r->thread, th->name, sizeof(r->thread));
        set_acc_of(m, r, owner_of(m->cs->out, r), THREAD_HOLDER + t);
        scan_range(m, lo, hi);
        m->cs->out->end.root_bytes += hi - lo;
        m->cs->out->end.tls_roots++;
        if (!r->retained_blocks && !m->made_shared && r == &m->cs->out->roots[m->cs->out->n_roots - 1])
            m->cs->out->n_roots--; /* keep only those that hold something */
    }
}

/* The registers of each thread the cli stopped: 16 words, one root per
 * thread (after its stack: what both hold is the stack's). */
static void mark_registers(struct marker *m)
{
    const struct pl_census_in *in = m->cs->in;
    struct hi_census_root spill;
    for (unsigned t = 0; t < in->n_threads; t++) {
        const struct pl_census_thread *th = &in->threads[t];
        if (!th->has_regs)
            continue;
        m->cs->out->end.threads_with_regs++;
        struct hi_census_root *r = new_root(m->cs->out, &spill);
        memset(r, 0, sizeof(*r));
        r->kind = HI_ROOT_REGISTER;
        r->tid = th->tid;
        memcpy(r->thread, th->name, sizeof(r->thread));
        set_acc_of(m, r, owner_of(m->cs->out, r), THREAD_HOLDER + t);
        for (unsigned k = 0; k < HI_CENSUS_GPRS; k++) {
            reach(m, th->gpr[k]);
            drain(m);
        }
        if (!r->retained_blocks && !m->made_shared && r == &m->cs->out->roots[m->cs->out->n_roots - 1])
            m->cs->out->n_roots--; /* keep only registers that hold something */
    }
}

/* The first range, among a module's writable data (scanned word by word
 * by mark_globals) and the mmapped chunks (blocks), that ends after pos
 * and starts before hi; 0 if none. */
static int next_hole(const struct pl_census *cs, uintptr_t pos, uintptr_t hi, uintptr_t *lo_out, uintptr_t *hi_out)
{
    int found = 0;
    for (unsigned g = 0; g < cs->in->n_globals; g++) {
        const struct pl_census_range *r = &cs->in->globals[g];
        if (r->hi > pos && r->lo < hi && (!found || r->lo < *lo_out)) {
            *lo_out = r->lo;
            *hi_out = r->hi;
            found = 1;
        }
    }
    for (unsigned k = 0; k < cs->nmm; k++)
        if (cs->mm[k].hi > pos && cs->mm[k].lo < hi && (!found || cs->mm[k].lo < *lo_out)) {
            *lo_out = cs->mm[k].lo;
            *hi_out = cs->mm[k].hi;
            found = 1;
        }
    return found;
}

/* Scans the pages of [lo, hi) that can hold something (present or
 * swapped out: pl_census_data_run); the others read as zeros. */
static void scan_populated(struct marker *m, uintptr_t lo, uintptr_t hi)
{
    uintptr_t run_lo, run_hi, pos = lo;
    while (pl_census_data_run(m->cs, pos, hi, &run_lo, &run_hi)) {
        m->cs->untouched += run_lo - pos;
        scan_range(m, run_lo, run_hi);
        pos = run_hi;
    }
    m->cs->untouched += hi > pos ? hi - pos : 0;
}

/* Scans [lo, hi) of an anonymous mapping but its holes. The kernel merges
 * adjacent anonymous mappings into one line of /proc/self/maps: a
 * library's .bss (its last page-rounded part is anonymous) with the
 * memory a runtime mapped next to it (python3's object arenas behind
 * libunwind's .bss made 20,000 live objects look leaked), a malloc'ed
 * chunk's own mapping with its neighbours. */
static void scan_outside(struct marker *m, uintptr_t lo, uintptr_t hi)
{
    uintptr_t pos = lo, hole_lo = 0, hole_hi = 0;
    while (pos < hi && next_hole(m->cs, pos, hi, &hole_lo, &hole_hi)) {
        if (hole_lo > pos)
            scan_populated(m, pos, hole_lo);
        pos = hole_hi > pos ? hole_hi : pos + 8;
    }
    if (pos < hi)
        scan_populated(m, pos, hi);
}

static void mark_mappings(struct marker *m)
{
    struct pl_census *cs = m->cs;
    struct hi_census_root spill;
    for (unsigned i = 0; i < cs->nmaps; i++) {
        struct pl_cmap *cm = &cs->maps[i];
        /* Private writable mappings of files count too (their written
         * pages are the program's own memory): the JVM maps its class
         * archive classes.jsa so, and 197 blocks held only from there
         * were called unreachable. A module's data is a hole here
         * (globals, scanned word by word). */
        if (!cm->priv || !cm->read || !cm->write)
            continue;
        if (cm->kind != PL_CMAP_OTHER && !(cm->kind == PL_CMAP_STACK && cm->lo != 0))
            continue;
        if (cm->kind == PL_CMAP_STACK) {
            /* [stack] whose thread gave no stack pointer is scanned whole;
             * one with a known pointer was scanned by mark_stacks */
            int done = 0;
            for (unsigned t = 0; t < cs->in->n_threads; t++)
                done |= cs->in->threads[t].has_sp && cs->in->threads[t].sp >= cm->lo &&
                        cs->in->threads[t].sp < cm->hi;
            if (done)
                continue;
        }
        struct hi_census_root *r = new_root(cs->out, &spill);
        memset(r, 0, sizeof(*r));
        r->kind = HI_ROOT_MAPPING;
        r->addr = cm->lo;
        r->end = cm->hi;
        set_acc(m, r, owner_of(m->cs->out, r));
        scan_outside(m, cm->lo, cm->hi);
        cs->out->end.root_bytes += cm->hi - cm->lo;
        if (!r->retained_blocks && !m->made_shared && r == &cs->out->roots[cs->out->n_roots - 1])
            cs->out->n_roots--; /* keep only roots that hold something */
    }
}

/* Memory the fork did not copy, read by the agent (census_uncopied.c):
 * one root per mapping, after every mapping the copy has. Waits for the
 * agent, which reads while this child walks the heap. */
static void mark_uncopied(struct marker *m)
{
    struct pl_uncopied *u = m->cs->in->uncopied;
    struct hi_census_end *e = &m->cs->out->end;
    struct hi_census_root spill;
    if (!u)
        return;
    uint64_t give_up = pl_now_ns() + m->cs->in->timeout_ns / 4 + 1000000000ull;
    while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE) && pl_now_ns() < give_up) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    uint32_t n = __atomic_load_n(&u->n_maps, __ATOMIC_ACQUIRE);
    uint64_t read = 0, unread = 0, total = u->total_bytes;
    for (uint32_t i = 0; i < n; i++) {
        const struct pl_uncopied_map *um = &u->maps[i];
        struct hi_census_root *r = new_root(m->cs->out, &spill);
        memset(r, 0, sizeof(*r));
        r->kind = HI_ROOT_UNCOPIED;
        r->addr = um->lo;
        r->end = um->hi;
        set_acc(m, r, owner_of(m->cs->out, r));
        for (uint64_t k = um->first; k < um->first + um->count; k++) {
            reach(m, u->values[k]);
            drain(m);
        }
        e->root_bytes += um->read_bytes;
        read += um->hi - um->lo;
        unread += um->unread_bytes;
        if (!r->retained_blocks && !m->made_shared && r == &m->cs->out->roots[m->cs->out->n_roots - 1])
            m->cs->out->n_roots--; /* keep only roots that hold something */
    }
    e->uncopied_mib = (uint32_t)((total + (1u << 20) - 1) >> 20);
    uint64_t missed = (total > read ? total - read : 0) + unread;
    e->uncopied_missed_mib = (uint32_t)((missed + (1u << 20) - 1) >> 20);
}

/* The data words of the epoll registrations (census_kernel.h): one root,
 * last. */
static void mark_kernel(struct marker *m)
{
    const struct pl_kernel_words *k = m->cs->in->kernel;
    struct hi_census_root spill;
    if (!k || !k->n)
        return;
    struct hi_census_root *r = new_root(m->cs->out, &spill);
    memset(r, 0, sizeof(*r));
    r->kind = HI_ROOT_KERNEL;
    set_acc(m, r, owner_of(m->cs->out, r));
    for (uint32_t i = 0; i < k->n; i++) {
        reach(m, k->w[i]);
        drain(m);
    }
    if (!r->retained_blocks && !m->made_shared && r == &m->cs->out->roots[m->cs->out->n_roots - 1])
        m->cs->out->n_roots--; /* keep it only when it holds something */
}

/* ---- groups -------------------------------------------------------- */

struct group_table {
    struct hi_census_group *g; /* out->groups */
    uint32_t *slot;            /* open addressing: group index + 1 */
    uint64_t nslots;
    uint64_t n, max;
};

static int in_image(const struct pl_census_in *in, uintptr_t v)
{
    for (unsigned i = 0; i < in->n_images; i++)
        if (v >= in->images[i].lo && v < in->images[i].hi)
            return 1;
    return 0;
}

static struct hi_census_group *group_of(struct group_table *t, uint64_t size, uint64_t fw)
{
    uint64_t h = (size * 0x9e3779b97f4a7c15ull) ^ (fw * 0xc2b2ae3d27d4eb4full);
    for (uint64_t k = 0; k < t->nslots; k++) {
        uint64_t s = (h + k) & (t->nslots - 1);
        if (!t->slot[s]) {
            if (t->n == t->max)
                return NULL;
            struct hi_census_group *g = &t->g[t->n];
            memset(g, 0, sizeof(*g));
            g->size = size;
            g->first_word = fw;
            t->slot[s] = (uint32_t)++t->n;
            return g;
        }
        struct hi_census_group *g = &t->g[t->slot[s] - 1];
        if (g->size == size && g->first_word == fw)
            return g;
    }
    return NULL;
}

/* Sampled addresses since attach: the session's own table, read in the
 * copy (its stripe locks may have been held by a thread at the fork: the
 * copy's are cleared, no thread of the copy holds them), put in an
 * open-addressing table by address (a census at RATE=1 has as many
 * sampled blocks as blocks). */
#define SAMPLED_SLOTS (1u << 18) /* at most half full */

struct sampled {
    struct pl_census *cs;
    uintptr_t *ptr;  /* 0: empty slot */
    uint64_t *est;
    int32_t *bucket;
    uint64_t n;
};

static uint64_t slot_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static void sampled_cb(const struct pl_live *e, void *arg)
{
    struct sampled *s = arg;
    int64_t i = pl_census_find(s->cs, e->ptr);
    if (i < 0 || s->cs->blk[i].mem != e->ptr || !e->ptr || s->n >= SAMPLED_SLOTS / 2)
        return;
    uint64_t k = slot_hash(e->ptr) & (SAMPLED_SLOTS - 1);
    while (s->ptr[k] && s->ptr[k] != e->ptr)
        k = (k + 1) & (SAMPLED_SLOTS - 1);
    if (!s->ptr[k])
        s->n++;
    s->cs->blk[i].flags |= PL_BLK_SAMPLED;
    s->ptr[k] = e->ptr;
    s->est[k] = e->est_bytes;
    s->bucket[k] = e->bucket;
}

/* The slot of a sampled block, or -1. */
static int64_t sampled_slot(const struct sampled *s, uintptr_t mem)
{
    for (uint64_t k = slot_hash(mem) & (SAMPLED_SLOTS - 1); s->ptr[k]; k = (k + 1) & (SAMPLED_SLOTS - 1))
        if (s->ptr[k] == mem)
            return (int64_t)k;
    return -1;
}

/* Bytes per (group, stack): which stack allocated most of a group since
 * attach. Open addressing on (group + 1) << 32 | (bucket + 1). */
struct group_stacks {
    uint64_t *key, *bytes;
};

static void group_stack_add(struct group_stacks *gs, uint32_t group, int32_t bucket, uint64_t bytes)
{
    if (!gs->key || bucket < 0)
        return;
    uint64_t key = ((uint64_t)group + 1) << 32 | (uint32_t)(bucket + 1);
    uint64_t k = slot_hash(key) & (SAMPLED_SLOTS - 1);
    for (unsigned probes = 0; gs->key[k] && gs->key[k] != key; probes++) {
        if (probes == SAMPLED_SLOTS)
            return;
        k = (k + 1) & (SAMPLED_SLOTS - 1);
    }
    gs->key[k] = key;
    gs->bytes[k] += bytes;
}

/* Each group's top stack: its PCs from the session's bucket table (in the
 * copy). */
static void group_stacks_pick(const struct group_stacks *gs, struct hi_census_group *groups, uint64_t ngroups)
{
    if (!gs->key)
        return;
    for (uint64_t k = 0; k < SAMPLED_SLOTS; k++) {
        if (!gs->key[k])
            continue;
        uint64_t gi = (gs->key[k] >> 32) - 1;
        int32_t bucket = (int32_t)(uint32_t)(gs->key[k] & 0xffffffffu) - 1;
        if (gi >= ngroups || gs->bytes[k] <= groups[gi].top_stack_bytes || (uint32_t)bucket >= pl_bucket_count())
            continue;
        const struct pl_bucket *b = pl_bucket_at((uint32_t)bucket);
        const uintptr_t *pcs = b ? pl_bucket_frames(b) : NULL;
        if (!pcs)
            continue;
        struct hi_census_group *g = &groups[gi];
        g->top_stack_bytes = gs->bytes[k];
        g->top_stack_nframes = b->nframes < HI_CENSUS_STACK_FRAMES ? b->nframes : HI_CENSUS_STACK_FRAMES;
        for (uint32_t f = 0; f < g->top_stack_nframes; f++)
            g->top_stack[f] = pcs[f];
    }
}

/* make_groups reads every in-use block's first word, one after the other
 * through the heap: a miss each (a sixth of the mixed heap's mark) unless
 * fetched this many blocks ahead. */
#define GROUPS_AHEAD 8u

static void make_groups(struct pl_census *cs)
{
    struct hi_census_end *e = &cs->out->end;
    struct group_table t = { cs->out->groups, NULL, 1u << 20, 0, PL_CENSUS_MAX_GROUPS };
    t.slot = pl_census_map(t.nslots * sizeof(uint32_t));
    struct sampled s = { cs, NULL, NULL, NULL, 0 };
    struct group_stacks gs = { NULL, NULL };
    if (pl_addrmap_count() > 0) { /* none: the table may not even exist */
        s.ptr = pl_census_map(SAMPLED_SLOTS * sizeof(uintptr_t));
        s.est = pl_census_map(SAMPLED_SLOTS * sizeof(uint64_t));
        s.bucket = pl_census_map(SAMPLED_SLOTS * sizeof(int32_t));
        gs.key = pl_census_map(SAMPLED_SLOTS * sizeof(uint64_t));
        gs.bytes = pl_census_map(SAMPLED_SLOTS * sizeof(uint64_t));
        if (!gs.key || !gs.bytes)
            gs.key = NULL;
        if (s.ptr && s.est && s.bucket) {
            pl_addrmap_atfork_child();
            pl_addrmap_foreach(sampled_cb, &s);
        }
    }
    for (uint64_t i = 0; i < cs->nblk; i++) {
        const struct pl_blk *b = &cs->blk[i];
        if (i + GROUPS_AHEAD < cs->nblk)
            __builtin_prefetch((const void *)cs->blk[i + GROUPS_AHEAD].mem);
        if (b->flags & (PL_BLK_FREE | PL_BLK_META)) {
            if (b->flags & PL_BLK_FREE) {
                e->free_blocks++;
                e->free_bytes += (uint64_t)b->csize16 * 16u;
            }
            continue;
        }
        uint64_t size = pl_blk_usable(b);
        e->in_use_blocks++;
        e->in_use_bytes += size;
        int lost = !(b->flags & PL_BLK_MARK);
        if (lost) {
            e->unreachable_blocks++;
            e->unreachable_bytes += size;
        }
        uintptr_t fw = *(const uintptr_t *)b->mem;
        if (!in_image(cs->in, fw))
            fw = 0;
        struct hi_census_group *g = t.slot ? group_of(&t, size, fw) : NULL;
        if (!g && t.slot && fw) {
            g = group_of(&t, size, 0);
            e->groups_dropped++;
        }
        if (!g) {
            e->groups_dropped++;
            continue;
        }
        /* The preview is of the block at the last power of two: one from
         * the later half of the group, not its first block (often
         * start-up data: an environment string in a group of records). */
        if ((g->blocks & (g->blocks - 1)) == 0)
            memcpy(g->preview, (const void *)b->mem, size < HI_CENSUS_PREVIEW ? size : HI_CENSUS_PREVIEW);
        g->blocks++;
        if (lost) {
            if ((g->unreachable_blocks & (g->unreachable_blocks - 1)) == 0)
                memcpy(g->unreachable_preview, (const void *)b->mem,
                       size < HI_CENSUS_PREVIEW ? size : HI_CENSUS_PREVIEW);
            g->unreachable_blocks++;
        }
        int64_t k = b->flags & PL_BLK_SAMPLED ? sampled_slot(&s, b->mem) : -1;
        if (k >= 0) {
            g->since_attach_blocks++;
            g->since_attach_bytes += s.est[k];
            group_stack_add(&gs, (uint32_t)(g - t.g), s.bucket[k], s.est[k]);
        }
    }
    cs->out->n_groups = (uint32_t)t.n;
    group_stacks_pick(&gs, t.g, t.n);
}

void pl_census_child(const struct pl_census_in *in, struct pl_census_out *out)
{
    struct pl_census cs;
    memset(&cs, 0, sizeof(cs));
    cs.in = in;
    cs.out = out;
    out->end.allocator = HI_ALLOC_GLIBC;
    out->end.mallinfo_free = in->mallinfo_free;
    out->end.mallinfo_mmapped = in->mallinfo_mmapped;
    cs.pagemap = -1;
    if (pl_census_read_maps(&cs) < 0 || pl_census_walk(&cs) < 0)
        return;
    pl_census_mark(&cs);
}

void pl_census_mark(struct pl_census *cs)
{
    const struct pl_census_in *in = cs->in;
    struct pl_census_out *out = cs->out;
    pl_census_index_build(cs); /* none: every look-up searches the whole table */
    /* Our thread's dtv is the profiler's, not a block of the program's: no
     * root of the program's holds it (it showed as leaked once main_arena's
     * top, which pointed just past it, was no root any more). */
    int64_t dtv = in->agent_dtv ? pl_census_find(cs, in->agent_dtv) : -1;
    if (dtv >= 0 && !(cs->blk[dtv].flags & (PL_BLK_FREE | PL_BLK_META))) {
        cs->blk[dtv].flags |= PL_BLK_META;
        out->end.metadata_bytes += pl_blk_usable(&cs->blk[dtv]);
    }
    struct marker m;
    memset(&m, 0, sizeof(m));
    m.cs = cs;
    m.popcnt = cpu_has_popcnt();
    m.stack = pl_census_map(MARK_STACK_MAX * sizeof(uint64_t));
    m.holder_of = pl_census_map((PL_CENSUS_MAX_ROOTS + 2u) * sizeof(uint32_t));
    /* none (no memory): only blocks done for good (shared) get their bits */
    m.done_log = cs->index && cs->nblk ? pl_census_map(cs->nblk * sizeof(uint64_t)) : NULL;
    if (!m.stack || !m.holder_of) {
        pl_census_fail(cs, ENOMEM, "no memory for the mark stack");
        return;
    }
    if (cs->nblk) {
        m.lo = cs->blk[0].mem;
        m.hi = cs->blk[cs->nblk - 1].mem + pl_blk_usable(&cs->blk[cs->nblk - 1]);
    }
    mark_globals(&m);
    mark_tls(&m);
    mark_stacks(&m);
    mark_registers(&m);
    mark_mappings(&m);
    mark_uncopied(&m);
    mark_kernel(&m);
    /* The shared records last, after every root they name. A full table
     * gives way from its end (the smallest roots are the latest). */
    if (m.nshared < SHARED_PAIRS && m.shared[SHARED_PAIRS - 1].retained_blocks)
        m.shared[m.nshared++] = m.shared[SHARED_PAIRS - 1];
    for (unsigned k = 0; k < m.nshared; k++) {
        if (!m.shared[k].retained_blocks)
            continue;
        struct hi_census_root spill, *r = new_root(cs->out, &spill);
        if (r == &spill)
            r = &cs->out->roots[PL_CENSUS_MAX_ROOTS - 1 - (m.nshared - 1 - k)];
        *r = m.shared[k];
        r->kind = HI_ROOT_SHARED;
    }
    if (in->py.type_type)
        pl_pycensus_child(cs, &in->py, &out->py);
    if (cs->pagemap >= 0)
        close(cs->pagemap);
    cs->out->end.untouched_mib = (uint32_t)(cs->untouched >> 20 < UINT32_MAX ? cs->untouched >> 20 : UINT32_MAX);
    make_groups(cs);
}
