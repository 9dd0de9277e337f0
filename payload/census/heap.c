/* census_heap.c - every chunk of glibc malloc, walked in the census child.
 *
 * The facts used (glibc malloc/malloc.c, 2.26 and later; checked against
 * 2.36 here): a chunk is a 16-aligned header of two words, prev_size and
 * size, size's low bits PREV_INUSE (1), IS_MMAPPED (2), NON_MAIN_ARENA (4);
 * a chunk is in use when the next chunk's PREV_INUSE is set, except for
 * chunks parked in a tcache or a fastbin, which stay "in use" in the
 * layout and are found on their lists. The main arena's chunks fill
 * [heap] up to its top chunk; another arena's fill 64 MiB-aligned heaps
 * that begin with a heap_info (ar_ptr, prev, size); old heaps end in
 * fenceposts (a 16-byte chunk, then a size-0 header). A mmapped chunk is a
 * mapping of its own whose header has IS_MMAPPED.
 *
 * Where the layout of a structure is needed (struct malloc_state: top at
 * 96, fastbinsY at 16, next at 2160; tcache_perthread_struct: 64 uint16
 * counts then 64 heads), every use is checked against what the walk found
 * independently: main_arena is the word in libc's data that holds the
 * top chunk the walk of [heap] ended on; a tcache structure is accepted
 * only when each of its 64 lists has exactly the length its count says and
 * every entry is a chunk of that list's size. Anything that does not check
 * out stops the census with the reason: never a silent guess. */
#include "payload/census/heap.h"

#include "common/maps_line.h"
#include "payload/census/index.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CH_PREV_INUSE 1u
#define CH_IS_MMAPPED 2u
#define CH_NON_MAIN 4u
#define CH_SIZE_BITS 7u
#define CH_MINSIZE 32u

/* struct malloc_state: libc's debug information's (in->layout), else the
 * offsets of glibc 2.26 to 2.41 on x86_64. */
#define ARENA_FASTBINS (cs->lay.fastbins)
#define ARENA_NFASTBINS (cs->lay.nfastbins)
#define ARENA_TOP (cs->lay.top)
#define ARENA_BINS (cs->lay.bins)
#define ARENA_NEXT (cs->lay.next)
#define ARENA_SYSTEM_MEM (cs->lay.system_mem)
#define ARENA_SIZE (cs->lay.size)

static const struct hi_census_layout builtin_layout = HI_CENSUS_LAYOUT_GLIBC_X86_64;
#define HEAP_MAX (64ul << 20)

#define TCACHE_BINS 64u
#define TCACHE_CHUNK 0x290u

int pl_census_fail(struct pl_census *cs, int code, const char *why)
{
    struct hi_census_end *e = &cs->out->end;
    e->status = -code;
    size_t n = strlen(why);
    if (n >= sizeof(e->why))
        n = sizeof(e->why) - 1;
    memcpy(e->why, why, n);
    e->why[n] = '\0';
    return -code;
}

void *pl_census_map(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- /proc/self/maps ------------------------------------------------ */

/* One line (common/maps_line.c) as the census uses it: false when it does
 * not parse. Anonymous: inode 0 and no path, a "[anon:...]" name or the
 * stack. */
static bool parse_line(struct pl_cmap *m, const char *p, const char *end)
{
    struct hi_maps_line l;
    memset(m, 0, sizeof(*m));
    if (!hi_maps_line_parse(p, end, &l))
        return false;
    m->lo = (uintptr_t)l.start;
    m->hi = (uintptr_t)l.end;
    m->read = l.perms[0] == 'r';
    m->write = l.perms[1] == 'w';
    m->priv = l.perms[3] == 'p';
    const char *path = l.path;
    size_t plen = path ? l.pathlen : 0;
    m->anon = l.inode == 0 && (plen == 0 || (plen > 6 && !memcmp(path, "[anon:", 6)) ||
                               (plen == 7 && !memcmp(path, "[stack]", 7)));
    if (plen == 6 && !memcmp(path, "[heap]", 6))
        m->kind = PL_CMAP_HEAP;
    else if (plen == 7 && !memcmp(path, "[stack]", 7))
        m->kind = PL_CMAP_STACK;
    return true;
}

/* [heap] in one entry. A fork child that grows its heap after the fork
 * (every PostgreSQL backend, every pre-fork worker) has it as two or more
 * adjacent mappings: the part it inherited and the part it grew have
 * different anon_vmas, so the kernel cannot merge them. The kernel labels
 * every mapping that overlaps start_brk..brk "[heap]" (show_map_vma,
 * vma_is_initial_heap), so the parts are the adjacent [heap] lines; an
 * unlabelled mapping next to them lies beyond brk and is not the heap. */
static void join_heap_parts(struct pl_census *cs)
{
    unsigned w = 0;
    for (unsigned i = 0; i < cs->nmaps; i++) {
        struct pl_cmap *m = &cs->maps[i];
        struct pl_cmap *prev = w ? &cs->maps[w - 1] : NULL;
        if (prev && prev->kind == PL_CMAP_HEAP && m->kind == PL_CMAP_HEAP && prev->hi == m->lo &&
            prev->read == m->read && prev->write == m->write && prev->priv == m->priv) {
            prev->hi = m->hi;
            continue;
        }
        cs->maps[w++] = *m;
    }
    cs->nmaps = w;
}

int pl_census_read_maps(struct pl_census *cs)
{
    uint64_t cap = 64u << 20;
    char *buf = pl_census_map(cap);
    if (!buf)
        return pl_census_fail(cs, ENOMEM, "no memory for the map of the process");
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pl_census_fail(cs, errno, "cannot open /proc/self/maps in the copy");
    uint64_t have = 0;
    for (;;) {
        if (have == cap) {
            close(fd);
            return pl_census_fail(cs, E2BIG, "/proc/self/maps is larger than 64 MiB");
        }
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (uint64_t)r;
    }
    close(fd);
    unsigned lines = 0;
    for (uint64_t i = 0; i < have; i++)
        lines += buf[i] == '\n';
    cs->maps = pl_census_map((uint64_t)(lines + 1) * sizeof(struct pl_cmap));
    if (!cs->maps)
        return pl_census_fail(cs, ENOMEM, "no memory for the map of the process");
    struct hi_maps_lines it = hi_maps_lines_of(buf, have);
    const char *p, *nl;
    while (hi_maps_lines_next(&it, &p, &nl))
        if (nl - p > 20 && parse_line(&cs->maps[cs->nmaps], p, nl))
            cs->nmaps++;
    join_heap_parts(cs);
    munmap(buf, cap);
    cs->skip[cs->nskip].lo = (uintptr_t)buf; /* listed, and gone now */
    cs->skip[cs->nskip++].hi = (uintptr_t)buf + cap;
    for (unsigned x = 0; x < cs->in->n_exclude && cs->nskip < sizeof(cs->skip) / sizeof(cs->skip[0]); x++)
        cs->skip[cs->nskip++] = cs->in->exclude[x];
    /* The agent's stack, within the mapping that holds it (a neighbour the
     * kernel merged with it stays the program's). */
    uintptr_t at = cs->in->agent_stack.lo + (cs->in->agent_stack.hi - cs->in->agent_stack.lo) / 2;
    const struct pl_cmap *st = cs->in->agent_stack.hi ? pl_census_map_of(cs, at) : NULL;
    if (st && cs->nskip < sizeof(cs->skip) / sizeof(cs->skip[0])) {
        cs->skip[cs->nskip].lo = cs->in->agent_stack.lo > st->lo ? cs->in->agent_stack.lo : st->lo;
        cs->skip[cs->nskip++].hi = cs->in->agent_stack.hi < st->hi ? cs->in->agent_stack.hi : st->hi;
    }
    for (unsigned i = 0; i < cs->nmaps; i++) /* wholly ours: never looked at */
        for (unsigned x = 0; x < cs->nskip; x++)
            if (cs->skip[x].lo <= cs->maps[i].lo && cs->maps[i].hi <= cs->skip[x].hi)
                cs->maps[i].kind = PL_CMAP_EXCLUDED;
    cs->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    return cs->nmaps ? 0 : pl_census_fail(cs, ENOENT, "/proc/self/maps read empty in the copy");
}

/* Whether the page with index pg may hold data (see pl_census_data_run):
 * 1, 0, or -1 when the pagemap cannot be read there. */
static int page_data(struct pl_census *cs, uint64_t pg)
{
    if (pg < cs->pm_first || pg >= cs->pm_first + cs->pm_n) {
        ssize_t r = pread(cs->pagemap, cs->pm, sizeof(cs->pm), (off_t)(pg * 8));
        if (r < 8)
            return -1;
        cs->pm_first = pg;
        cs->pm_n = (uint64_t)r / 8;
    }
    return (cs->pm[pg - cs->pm_first] >> 62) != 0; /* present or swapped */
}

int pl_census_data_run(struct pl_census *cs, uintptr_t lo, uintptr_t hi, uintptr_t *run_lo, uintptr_t *run_hi)
{
    if (lo >= hi)
        return 0;
    if (cs->pagemap < 0) {
        *run_lo = lo;
        *run_hi = hi;
        return 1;
    }
    uint64_t pg = lo / 4096, last = (hi - 1) / 4096;
    int d = 0;
    while (pg <= last && (d = page_data(cs, pg)) == 0)
        pg++;
    if (pg > last)
        return 0;
    *run_lo = pg * 4096 > lo ? pg * 4096 : lo;
    if (d < 0) { /* unreadable from here on: the rest is one run */
        *run_hi = hi;
        return 1;
    }
    while (pg <= last && page_data(cs, pg) != 0)
        pg++;
    *run_hi = pg * 4096 < hi ? pg * 4096 : hi;
    return 1;
}

uintptr_t pl_census_skip_end(const struct pl_census *cs, uintptr_t addr)
{
    for (unsigned x = 0; x < cs->nskip; x++)
        if (addr >= cs->skip[x].lo && addr < cs->skip[x].hi)
            return cs->skip[x].hi;
    return 0;
}

struct pl_cmap *pl_census_map_of(struct pl_census *cs, uintptr_t addr)
{
    unsigned lo = 0, hi = cs->nmaps;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (addr < cs->maps[mid].lo)
            hi = mid;
        else if (addr >= cs->maps[mid].hi)
            lo = mid + 1;
        else
            return &cs->maps[mid];
    }
    return NULL;
}

/* True when [addr, addr+len) is readable memory, of one mapping or of
 * adjacent ones (an arena's heap grown in a fork child is split like
 * [heap], see join_heap_parts). */
static int readable(struct pl_census *cs, uintptr_t addr, uint64_t len)
{
    if (addr + len < addr)
        return 0;
    struct pl_cmap *m = pl_census_map_of(cs, addr);
    while (m && m->read && m->hi < addr + len) {
        struct pl_cmap *next = m + 1 < cs->maps + cs->nmaps ? m + 1 : NULL;
        m = next && next->lo == m->hi ? next : NULL;
    }
    return m && m->read;
}

static uintptr_t word(uintptr_t addr)
{
    return *(const uintptr_t *)addr;
}

/* ---- blocks --------------------------------------------------------- */

static int add_block(struct pl_census *cs, uintptr_t mem, uint64_t csize, uint32_t flags)
{
    if (cs->nblk == cs->capblk)
        return -1;
    if (cs->nblk && cs->blk[cs->nblk - 1].mem >= mem)
        return -1; /* regions overlap: the walk went wrong */
    struct pl_blk *b = &cs->blk[cs->nblk++];
    b->mem = mem;
    b->csize16 = (uint32_t)(csize / 16u);
    b->flags = flags;
    return 0;
}

int64_t pl_census_find(const struct pl_census *cs, uintptr_t addr)
{
    if (cs->index)
        return pl_census_index_find(cs, addr);
    uint64_t lo = 0, hi = cs->nblk;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (cs->blk[mid].mem <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct pl_blk *b = &cs->blk[lo - 1];
    return addr < b->mem + pl_blk_usable(b) ? (int64_t)(lo - 1) : -1;
}

static int64_t find_exact(const struct pl_census *cs, uintptr_t mem)
{
    int64_t i = pl_census_find(cs, mem);
    return i >= 0 && cs->blk[i].mem == mem ? i : -1;
}

/* ---- regions to walk -------------------------------------------------- */

enum region_kind { R_MAIN, R_ARENA, R_MMAPPED };

struct region {
    uintptr_t lo, hi;      /* memory the chunks may occupy */
    uintptr_t first[3];    /* where the first chunk may begin (0: none) */
    uintptr_t top;         /* the arena's top chunk when it lies here; 0 */
    enum region_kind kind;
};

#define MAX_REGIONS 65536u

struct walk {
    struct region *r;
    unsigned n;
};

static int add_region(struct walk *w, const struct region *r)
{
    if (w->n == MAX_REGIONS)
        return -1;
    w->r[w->n++] = *r;
    return 0;
}

/* Walks one region from `first`. 0 when the walk ends where a region must
 * end (its top chunk, its end, or a fencepost); -1 otherwise. With
 * `dry`, only checks. */
static int walk_chunks(struct pl_census *cs, const struct region *r, uintptr_t first, int dry)
{
    struct hi_census_end *e = &cs->out->end;
    uintptr_t c = first;
    while (c + 16 <= r->hi) {
        uint64_t sz = word(c + 8) & ~(uint64_t)CH_SIZE_BITS;
        if (r->kind == R_MAIN && !r->top && sz == 0)
            return c > first ? 0 : -1; /* beyond brk: zeros to the page end */
        if (c == r->top) {
            if (c + sz > r->hi || sz % 16)
                return -1;
            if (!dry) {
                e->free_blocks++;
                e->free_bytes += sz;
            }
            return 0;
        }
        if (sz == 16 && r->kind == R_ARENA) { /* fencepost, then a 0 header */
            if (!dry)
                e->metadata_bytes += r->hi - c;
            return 0;
        }
        if (sz < CH_MINSIZE || sz % 16 || c + sz > r->hi)
            return -1;
        uintptr_t next = c + sz;
        int inuse;
        if (next + 16 <= r->hi) {
            uint64_t nw = word(next + 8);
            inuse = (nw & CH_PREV_INUSE) != 0;
            if (r->kind == R_MAIN && !r->top && (nw & ~(uint64_t)CH_SIZE_BITS) == 0) {
                /* c is the top chunk: the rest up to the page end is zero */
                if (!dry) {
                    e->free_blocks++;
                    e->free_bytes += sz;
                }
                return 0;
            }
        } else {
            /* the last chunk of [heap]: the main arena's top */
            if (r->kind != R_MAIN || next != r->hi)
                return -1;
            if (!dry) {
                e->free_blocks++;
                e->free_bytes += sz;
            }
            return 0;
        }
        if (!dry) {
            if (inuse) {
                if (add_block(cs, c + 16, sz, 0) < 0)
                    return -1;
                e->metadata_bytes += 8;
            } else {
                e->free_blocks++;
                e->free_bytes += sz;
            }
        }
        c = next;
    }
    return c == r->hi ? 0 : -1;
}

/* The last chunk of the walk of [heap]: its top (dry walk). */
static uintptr_t main_top(struct pl_census *cs, const struct region *r)
{
    uintptr_t c = r->first[0];
    while (c + 16 <= r->hi) {
        uint64_t sz = word(c + 8) & ~(uint64_t)CH_SIZE_BITS;
        if (sz < CH_MINSIZE || sz % 16 || c + sz > r->hi)
            return 0;
        uintptr_t next = c + sz;
        if (next == r->hi || (next + 16 <= r->hi && (word(next + 8) & ~(uint64_t)CH_SIZE_BITS) == 0))
            return c;
        c = next;
    }
    (void)cs;
    return 0;
}

/* main_arena: the word of libc's data that holds [heap]'s top chunk and
 * around which the rest of a malloc_state checks out. */
static uintptr_t find_main_arena(struct pl_census *cs, uintptr_t top, uintptr_t heap_lo, uintptr_t heap_hi)
{
    const struct pl_census_in *in = cs->in;
    for (unsigned i = 0; i < in->n_libc_data; i++) {
        for (uintptr_t p = (in->libc_data[i].lo + 7) & ~(uintptr_t)7; p + 8 <= in->libc_data[i].hi; p += 8) {
            if (word(p) != top || p < in->libc_data[i].lo + ARENA_TOP)
                continue;
            uintptr_t a = p - ARENA_TOP;
            if (!readable(cs, a, ARENA_SIZE))
                continue;
            uint64_t sysmem = word(a + ARENA_SYSTEM_MEM);
            if (sysmem == 0 || sysmem > (heap_hi - heap_lo) + (1u << 20))
                continue;
            int ok = 1;
            for (unsigned b = 0; b < 10 && ok; b++) {
                uintptr_t self = a + ARENA_BINS + 16u * b - 16u, fd = word(a + ARENA_BINS + 16u * b);
                ok = fd == self || (fd >= heap_lo && fd < heap_hi) || readable(cs, fd, 32);
            }
            uintptr_t next = word(a + ARENA_NEXT);
            if (ok && (next == a || readable(cs, next, ARENA_SIZE)))
                return a;
        }
    }
    return 0;
}

static int add_arena_heaps(struct pl_census *cs, struct walk *w, uintptr_t a)
{
    uintptr_t top = word(a + ARENA_TOP);
    uintptr_t h = top & ~(HEAP_MAX - 1);
    unsigned guard = 0;
    while (h && guard++ < 4096) {
        if (!readable(cs, h, 48) || word(h) != a)
            return -1;
        uint64_t size = word(h + 16);
        if (size < 4096 || size > HEAP_MAX || !readable(cs, h, size))
            return -1;
        struct region r = { .lo = h, .hi = h + size, .kind = R_ARENA };
        if (a >= h && a < h + size)
            r.first[0] = (a + ARENA_SIZE + 15) & ~(uintptr_t)15;
        else {
            r.first[0] = h + 32;
            r.first[1] = h + 48;
        }
        r.top = top >= h && top < h + size ? top : 0;
        if (add_region(w, &r) < 0)
            return -1;
        for (struct pl_cmap *m = pl_census_map_of(cs, h); m && m < cs->maps + cs->nmaps && m->lo < h + size; m++)
            m->kind = PL_CMAP_ARENA;
        h = word(h + 8);
    }
    cs->out->end.heaps += guard;
    return 0;
}

/* Mmapped chunks: a header (prev_size 0, size a page multiple with
 * IS_MMAPPED) at a page boundary of an anonymous private mapping. Looked
 * for at every page, as the kernel merges a chunk's mapping with an
 * adjacent anonymous one into one line of /proc/self/maps. */
static int add_mmapped(struct pl_census *cs, struct walk *w)
{
    for (unsigned i = 0; i < cs->nmaps; i++) {
        struct pl_cmap *m = &cs->maps[i];
        if (!m->anon || !m->priv || !m->read || !m->write || m->kind != PL_CMAP_OTHER)
            continue;
        for (uintptr_t p = m->lo, run_lo, run_hi = 0; p + 4096 <= m->hi;) {
            /* A chunk's header page was written by malloc: never-touched
             * pages are skipped unread (one run at a time: asking again
             * at every page would walk the rest of the run each time). */
            if (p >= run_hi) {
                if (!pl_census_data_run(cs, p, m->hi, &run_lo, &run_hi))
                    break;
                p = run_lo;
                if (p + 4096 > m->hi)
                    break;
            }
            uintptr_t skip = pl_census_skip_end(cs, p);
            if (skip) {
                p = (skip + 4095) & ~(uintptr_t)4095;
                continue;
            }
            uint64_t sz = word(p + 8);
            uint64_t bytes = sz & ~(uint64_t)CH_SIZE_BITS;
            if (word(p) != 0 || (sz & (CH_IS_MMAPPED | CH_NON_MAIN)) != CH_IS_MMAPPED || bytes == 0 ||
                bytes % 4096 || p + bytes > m->hi) {
                p += 4096;
                continue;
            }
            struct region r = { .lo = p, .hi = p + bytes, .first = { p }, .kind = R_MMAPPED };
            if (add_region(w, &r) < 0 || cs->nmm == PL_CENSUS_MAX_MMAPPED)
                return -1;
            cs->mm[cs->nmm].lo = p;
            cs->mm[cs->nmm++].hi = p + bytes;
            p += bytes;
        }
    }
    return 0;
}

/* memalign and posix_memalign into a mapping of its own: glibc maps
 * size + alignment, leaves the mapping's own header as it was and writes
 * the block's header where the aligned block starts, lead bytes in, with
 * prev_size = lead and size = the mapping's size - lead (what free() and
 * malloc_usable_size use). The lead is below the alignment; alignments up
 * to 2 MiB (a huge page) are looked for. 0: a plain mmapped chunk. */
#define MEMALIGN_LEAD_MAX (2u << 20)

static uint64_t memalign_lead(uintptr_t p, uint64_t sz)
{
    for (uint64_t lead = 16; lead + 32 <= sz && lead < MEMALIGN_LEAD_MAX; lead += 16)
        if (word(p + lead) == lead && word(p + lead + 8) == ((sz - lead) | CH_IS_MMAPPED))
            return lead;
    return 0;
}

/* Mmapped chunks, one after another while headers say so (adjacent
 * mappings merge into one line of /proc/self/maps). */
static void walk_mmapped(struct pl_census *cs, const struct region *r)
{
    struct hi_census_end *e = &cs->out->end;
    uintptr_t p = r->lo;
    while (p + 4096 <= r->hi) {
        uint64_t sz = word(p + 8);
        if (word(p) != 0 || !(sz & CH_IS_MMAPPED) || (sz & CH_NON_MAIN))
            break;
        sz &= ~(uint64_t)CH_SIZE_BITS;
        if (sz == 0 || sz % 4096 || p + sz > r->hi)
            break;
        uint64_t lead = memalign_lead(p, sz);
        if (add_block(cs, p + lead + 16, sz - lead, PL_BLK_MMAP) < 0)
            break;
        e->mmapped_blocks++;
        e->mmapped_bytes += sz - lead - 16;
        e->metadata_bytes += lead + 16;
        e->heap_bytes += sz;
        p += sz;
    }
}

static void sort_regions(struct walk *w)
{
    for (unsigned i = 1; i < w->n; i++) {
        struct region x = w->r[i];
        unsigned j = i;
        while (j > 0 && w->r[j - 1].lo > x.lo) {
            w->r[j] = w->r[j - 1];
            j--;
        }
        w->r[j] = x;
    }
}

/* ---- free lists ------------------------------------------------------ */

/* A list link as glibc stores it: protected (glibc >= 2.32: the pointer
 * XOR its own address >> 12) or plain. */
static uintptr_t reveal(const struct pl_census *cs, uintptr_t at)
{
    uintptr_t v = word(at);
    return cs->mangled ? v ^ (at >> 12) : v;
}

/* Follows one tcache list: entries are the memory of chunks of
 * `csize`, the list has exactly `count` of them. Marks them when `take`. */
static int tcache_list(struct pl_census *cs, uintptr_t head, unsigned count, uint64_t csize, int take)
{
    uintptr_t e = head;
    for (unsigned k = 0; k < count; k++) {
        int64_t i = find_exact(cs, e);
        if (i < 0 || (uint64_t)cs->blk[i].csize16 * 16u != csize || (cs->blk[i].flags & (PL_BLK_FREE | PL_BLK_MMAP)))
            return -1;
        if (take) {
            cs->blk[i].flags |= PL_BLK_FREE;
            cs->out->end.tcache_blocks++;
            cs->out->end.tcache_bytes += csize;
        }
        e = reveal(cs, e);
    }
    return e == 0 ? 0 : -1;
}

static int tcache_struct(struct pl_census *cs, uintptr_t t, int take)
{
    const uint16_t *counts = (const uint16_t *)t;
    const uintptr_t *heads = (const uintptr_t *)(t + 2u * TCACHE_BINS);
    for (unsigned b = 0; b < TCACHE_BINS; b++) {
        if (counts[b] == 0 && heads[b] == 0)
            continue;
        if (counts[b] == 0 || tcache_list(cs, heads[b], counts[b], CH_MINSIZE + 16u * b, take) < 0)
            return -1;
    }
    return 0;
}

/* Every chunk of the tcache structure's size that checks out as one. A
 * structure whose lists are all empty looks like a zeroed block of 640
 * bytes; it is taken as the allocator's when it is the first chunk of its
 * heap (where a thread's first malloc puts it), else left a block. */
static int take_tcaches(struct pl_census *cs, const struct walk *w)
{
    int have_nonempty = 0;
    for (int mangled = 1; mangled >= 0; mangled--) {
        cs->mangled = mangled;
        for (uint64_t i = 0; i < cs->nblk && !have_nonempty; i++) {
            struct pl_blk *b = &cs->blk[i];
            if (b->csize16 * 16u != TCACHE_CHUNK || (b->flags & PL_BLK_MMAP))
                continue;
            const uint16_t *counts = (const uint16_t *)b->mem;
            int any = 0;
            for (unsigned k = 0; k < TCACHE_BINS; k++)
                any |= counts[k] != 0;
            if (any && tcache_struct(cs, b->mem, 0) == 0)
                have_nonempty = 1;
        }
        if (have_nonempty)
            break;
    }
    if (!have_nonempty)
        cs->mangled = 1;
    for (uint64_t i = 0; i < cs->nblk; i++) {
        struct pl_blk *b = &cs->blk[i];
        if (b->csize16 * 16u != TCACHE_CHUNK || (b->flags & (PL_BLK_MMAP | PL_BLK_FREE)))
            continue;
        const uint16_t *counts = (const uint16_t *)b->mem;
        const uintptr_t *heads = (const uintptr_t *)(b->mem + 2u * TCACHE_BINS);
        int any = 0;
        for (unsigned k = 0; k < TCACHE_BINS; k++)
            any |= counts[k] != 0 || heads[k] != 0;
        int first_of_heap = 0;
        for (unsigned r = 0; r < w->n; r++)
            for (unsigned f = 0; f < 3; f++)
                first_of_heap |= w->r[r].first[f] && w->r[r].first[f] + 16 == b->mem;
        if (!any && !first_of_heap)
            continue;
        if (tcache_struct(cs, b->mem, 0) != 0)
            continue;
        tcache_struct(cs, b->mem, 1);
        b->flags |= PL_BLK_META;
        cs->out->end.metadata_bytes += TCACHE_CHUNK - 8;
    }
    return 0;
}

static int take_fastbins(struct pl_census *cs, uintptr_t a)
{
    for (unsigned b = 0; b < ARENA_NFASTBINS; b++) {
        uintptr_t c = word(a + ARENA_FASTBINS + 8u * b);
        uint64_t csize = CH_MINSIZE + 16u * b;
        for (uint64_t k = 0; c && k <= cs->nblk; k++) {
            int64_t i = find_exact(cs, c + 16);
            if (i < 0 || (uint64_t)cs->blk[i].csize16 * 16u != csize || (cs->blk[i].flags & PL_BLK_FREE))
                return -1;
            cs->blk[i].flags |= PL_BLK_FREE;
            cs->out->end.fastbin_blocks++;
            cs->out->end.fastbin_bytes += csize;
            c = reveal(cs, c + 16);
        }
        if (c)
            return -1;
    }
    return 0;
}

/* ---- the walk --------------------------------------------------------- */

int pl_census_walk(struct pl_census *cs)
{
    struct hi_census_end *e = &cs->out->end;
    struct walk w = { pl_census_map((uint64_t)MAX_REGIONS * sizeof(struct region)), 0 };
    if (!w.r)
        return pl_census_fail(cs, ENOMEM, "no memory for the census");
    cs->lay = builtin_layout;
    if (cs->in->have_layout) {
        const struct hi_census_layout *l = &cs->in->layout;
        if (l->size < 1024 || l->size > 8192 || l->top + 8 > l->size || l->next + 8 > l->size ||
            l->system_mem + 8 > l->size || l->bins + 16 * 10 > l->size || l->nfastbins == 0 ||
            l->nfastbins > 16 || l->fastbins + 8 * l->nfastbins > l->size)
            return pl_census_fail(cs, EPROTO, "libc's debug information describes a struct malloc_state "
                                              "the census does not know: not walked");
        cs->lay = *l;
    }
    uint64_t heap_total = 0;
    struct pl_cmap *heap = NULL;
    for (unsigned i = 0; i < cs->nmaps; i++) {
        if (cs->maps[i].kind == PL_CMAP_HEAP)
            heap = &cs->maps[i];
        if (cs->maps[i].anon && cs->maps[i].write)
            heap_total += cs->maps[i].hi - cs->maps[i].lo;
    }
    if (!heap)
        return pl_census_fail(cs, ENOTSUP, "the process has no [heap]: glibc's main arena is not in use "
                                           "(another allocator, or malloc from mmap only)");
    heap_total += heap->hi - heap->lo;
    struct region main = { .lo = heap->lo, .hi = heap->hi, .first = { heap->lo }, .kind = R_MAIN };
    uintptr_t top = main_top(cs, &main);
    if (!top)
        return pl_census_fail(cs, EPROTO, "the chunks of [heap] do not chain from its start to its end: "
                                          "not glibc's layout, or a corrupted heap");
    cs->main_arena = find_main_arena(cs, top, heap->lo, heap->hi);
    uintptr_t told = cs->in->have_layout ? cs->in->layout.main_arena : 0;
    if (told && cs->main_arena && told != cs->main_arena)
        return pl_census_fail(cs, EPROTO, "libc's debug information puts main_arena elsewhere than the "
                                          "malloc_state that holds [heap]'s top: not walked");
    if (!cs->main_arena)
        return pl_census_fail(cs, EPROTO, told ? "main_arena, where libc's debug information puts it, does not "
                                                 "hold the top chunk of [heap]: not walked"
                                               : "glibc's main_arena was not found in libc's data (no word holds "
                                                 "the top chunk of [heap] with a malloc_state around it)");
    e->layout_from_debuginfo = told != 0;
    main.top = top;
    add_region(&w, &main);
    cs->arenas[cs->narenas++] = cs->main_arena;
    e->heaps = 1;
    for (uintptr_t a = word(cs->main_arena + ARENA_NEXT); a != cs->main_arena; a = word(a + ARENA_NEXT)) {
        if (cs->narenas == sizeof(cs->arenas) / sizeof(cs->arenas[0]) || !readable(cs, a, ARENA_SIZE))
            return pl_census_fail(cs, EPROTO, "the list of arenas from main_arena.next does not close");
        cs->arenas[cs->narenas++] = a;
        if (add_arena_heaps(cs, &w, a) < 0)
            return pl_census_fail(cs, EPROTO, "an arena's heaps (heap_info chain from its top) do not check out");
    }
    e->arenas = cs->narenas;
    cs->mm = pl_census_map((uint64_t)PL_CENSUS_MAX_MMAPPED * sizeof(*cs->mm));
    if (!cs->mm || add_mmapped(cs, &w) < 0)
        return pl_census_fail(cs, E2BIG, "too many heaps to walk");
    sort_regions(&w);

    cs->capblk = heap_total / CH_MINSIZE + 16;
    cs->blk = pl_census_map(cs->capblk * sizeof(struct pl_blk));
    if (!cs->blk)
        return pl_census_fail(cs, ENOMEM, "no memory for the table of blocks");
    for (unsigned i = 0; i < w.n; i++) {
        struct region *r = &w.r[i];
        if (r->kind == R_MMAPPED) {
            walk_mmapped(cs, r);
            continue;
        }
        /* One candidate (the main arena, whose chain main_top() already
         * followed): walk it for real at once. A walk touches a page per
         * chunk; each pass over a GiB of 4 KiB blocks costs ~0.4 s here. */
        uintptr_t first = r->first[1] ? 0 : r->first[0];
        for (unsigned f = 0; f < 3 && !first; f++)
            if (r->first[f] && walk_chunks(cs, r, r->first[f], 1) == 0)
                first = r->first[f];
        if (!first || walk_chunks(cs, r, first, 0) < 0)
            return pl_census_fail(cs, EPROTO, r->kind == R_MAIN
                                                  ? "the chunks of [heap] do not chain up to main_arena's top"
                                                  : "the chunks of an arena's heap do not chain up to its end");
        e->heap_bytes += r->hi - r->lo;
        if (r->kind == R_MAIN)
            e->heap_bytes -= r->hi - r->lo - (top + (word(top + 8) & ~(uint64_t)CH_SIZE_BITS) - r->lo);
    }
    take_tcaches(cs, &w);
    for (unsigned i = 0; i < cs->narenas; i++)
        if (take_fastbins(cs, cs->arenas[i]) < 0)
            return pl_census_fail(cs, EPROTO, "a fastbin list does not check out (chunks of the wrong size, "
                                              "or a corrupted list)");
    munmap(w.r, (uint64_t)MAX_REGIONS * sizeof(struct region));
    return 0;
}
