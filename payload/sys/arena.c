/* arena.c - bounded mmap'ed memory for the payload's tables. */
#include "payload/sys/arena.h"
#include "payload/sys/seccomp_watch.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define PL_ARENA_MAX_MAPS 32

/* Read from outside too, by symbol, as {void *, size_t} pairs
 * (cli/memory/payload_tables.c): nothing more in it. */
struct pl_arena_map {
    void *addr;
    size_t len;
};

/* Appended under the start lock (start.c); read by the agent. */
static struct pl_arena_map pl_arena_maps[PL_ARENA_MAX_MAPS];
static unsigned pl_arena_nmaps;
static bool pl_arena_child_empty[PL_ARENA_MAX_MAPS]; /* MADV_WIPEONFORK (pl_arena_map_child_empty) */

static size_t page_round(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + pg - 1) & ~(pg - 1);
}

static void *arena_map(size_t bytes, bool child_empty);

void *pl_arena_map(size_t bytes)
{
    return arena_map(bytes, false);
}

void *pl_arena_map_child_empty(size_t bytes)
{
    return arena_map(bytes, true);
}

void pl_arena_keep_on_fork(bool keep)
{
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (pl_arena_child_empty[i])
            madvise(pl_arena_maps[i].addr, pl_arena_maps[i].len, keep ? MADV_KEEPONFORK : MADV_WIPEONFORK);
}

static void *arena_map(size_t bytes, bool child_empty)
{
    size_t len = page_round(bytes);
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    if (n >= PL_ARENA_MAX_MAPS) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* Best effort (Linux 4.14): without it the child's copy is emptied by
     * its fork handler alone, as before. */
    if (child_empty)
        madvise(p, len, MADV_WIPEONFORK);
    pl_arena_maps[n].addr = p;
    pl_arena_maps[n].len = len;
    pl_arena_child_empty[n] = child_empty;
    __atomic_store_n(&pl_arena_nmaps, n + 1, __ATOMIC_RELEASE);
    return p;
}

unsigned pl_arena_ranges(uintptr_t *lo, uintptr_t *hi, unsigned max)
{
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    if (n > max)
        n = max;
    for (unsigned i = 0; i < n; i++) {
        lo[i] = (uintptr_t)pl_arena_maps[i].addr;
        hi[i] = lo[i] + pl_arena_maps[i].len;
    }
    return n;
}

/* The budget: cap 0 means none. Claims race with the agent's update of
 * the cap only by a claim or two: the share leaves room for that. */
static uint64_t pl_budget_cap, pl_budget_claimed, pl_budget_dropped;

int pl_arena_claim(uint64_t bytes)
{
    uint64_t cap = __atomic_load_n(&pl_budget_cap, __ATOMIC_RELAXED);
    if (!cap) {
        __atomic_fetch_add(&pl_budget_claimed, bytes, __ATOMIC_RELAXED);
        return 0;
    }
    uint64_t had = __atomic_fetch_add(&pl_budget_claimed, bytes, __ATOMIC_RELAXED);
    if (had + bytes <= cap)
        return 0;
    __atomic_fetch_sub(&pl_budget_claimed, bytes, __ATOMIC_RELAXED);
    return -1;
}

static uint64_t budget_for(uint64_t room)
{
    uint64_t cap = __atomic_load_n(&pl_budget_claimed, __ATOMIC_RELAXED) + room / PL_ARENA_BUDGET_SHARE;
    return cap + !cap; /* 0 would mean no cap */
}

void pl_arena_budget_start(uint64_t room)
{
    __atomic_store_n(&pl_budget_cap, room == UINT64_MAX ? 0 : budget_for(room), __ATOMIC_RELAXED);
}

/* Only ever lowered: the tables' own growth shrinks the room too, and a
 * cap that followed the room up again would let them take a quarter of
 * what is left, then a quarter of that, ... until nothing is. */
void pl_arena_budget_recheck(uint64_t room)
{
    uint64_t cap = __atomic_load_n(&pl_budget_cap, __ATOMIC_RELAXED);
    if (room == UINT64_MAX || !cap)
        return;
    uint64_t now = budget_for(room);
    if (now < cap)
        __atomic_store_n(&pl_budget_cap, now, __ATOMIC_RELAXED);
}

void pl_arena_unclaim(uint64_t bytes)
{
    __atomic_fetch_sub(&pl_budget_claimed, bytes, __ATOMIC_RELAXED);
}

uint64_t pl_arena_budget_cap(void)
{
    return __atomic_load_n(&pl_budget_cap, __ATOMIC_RELAXED);
}

uint64_t pl_arena_budget_claimed(void)
{
    return __atomic_load_n(&pl_budget_claimed, __ATOMIC_RELAXED);
}

uint64_t pl_arena_budget_dropped(void)
{
    return __atomic_load_n(&pl_budget_dropped, __ATOMIC_RELAXED);
}

void pl_arena_budget_drop(void)
{
    __atomic_fetch_add(&pl_budget_dropped, 1, __ATOMIC_RELAXED);
}

void pl_arena_budget_reset(void)
{
    __atomic_store_n(&pl_budget_claimed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_budget_dropped, 0, __ATOMIC_RELAXED);
}

void pl_arena_clear(void *p, size_t bytes)
{
    size_t len = page_round(bytes);
    /* MADV_DONTNEED on private anonymous memory: the next touch sees zero
     * pages. If it fails (it does not for anonymous maps), zero by hand. */
    /* A seccomp filter installed after attach may forbid madvise. */
    if (!pl_seccomp_recheck(HI_GATE_LEAVE) || madvise(p, len, MADV_DONTNEED) != 0) {
        volatile unsigned char *c = p;
        for (size_t i = 0; i < len; i++)
            c[i] = 0;
    }
}

/* Of npages pages from page number first, how many pagemap says are
 * present (bit 63) and exclusively mapped (bit 56), in pages; -1 if
 * unreadable. */
#define PAGEMAP_BATCH 512 /* entries per pread */

static int64_t exclusive_pages(int fd, uintptr_t first, size_t npages)
{
    uint64_t ent[PAGEMAP_BATCH];
    int64_t n = 0;
    for (size_t off = 0; off < npages;) {
        size_t chunk = npages - off < PAGEMAP_BATCH ? npages - off : PAGEMAP_BATCH;
        ssize_t r = pread(fd, ent, chunk * sizeof(uint64_t), (off_t)((first + off) * sizeof(uint64_t)));
        if (r <= 0)
            return -1;
        size_t got = (size_t)r / sizeof(uint64_t);
        for (size_t j = 0; j < got; j++)
            n += (ent[j] >> 63) & (ent[j] >> 56) & 1;
        off += got;
    }
    return n;
}

/* PAGEMAP_SCAN (Linux 6.7): the kernel walks the page tables and returns
 * the runs of present pages, skipping an empty table (2 MiB) at a time.
 * The ABI's values, for headers older than the kernel. */
#ifndef PAGEMAP_SCAN
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct page_region {
    uint64_t start, end, categories;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
#endif

static int pl_scan_refused; /* the kernel has no PAGEMAP_SCAN: mincore then */

void pl_arena_resident_no_scan(int no)
{
    pl_scan_refused = no;
}

#define SCAN_REGIONS 64

/* Of [first, first + pages) (page numbers), the pages both present and
 * exclusively mapped: the present runs from PAGEMAP_SCAN, each run's
 * exclusive bit from pagemap. -2 when the kernel has no such ioctl, -1
 * when unreadable. */
static int64_t scan_resident(int fd, uintptr_t first, size_t pages, size_t pg)
{
    struct page_region reg[SCAN_REGIONS];
    uint64_t end = (uint64_t)(first + pages) * pg;
    int64_t n = 0;
    for (uint64_t at = (uint64_t)first * pg; at < end;) {
        /* Present and not the shared zero page (a page only read):
         * category_inverted makes PFNZERO match when it is clear. */
        struct pm_scan_arg a = { .size = sizeof(a), .start = at, .end = end,
                                 .vec = (uint64_t)(uintptr_t)reg, .vec_len = SCAN_REGIONS,
                                 .category_inverted = PAGE_IS_PFNZERO,
                                 .category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
                                 .return_mask = PAGE_IS_PRESENT };
        long got = ioctl(fd, PAGEMAP_SCAN, &a);
        if (got < 0)
            return errno == ENOTTY || errno == EINVAL ? -2 : -1;
        /* The runs within one read's 512 entries in one read (a page
         * between them reads as not present): a followed backend's tables
         * left ~60 short runs. */
        for (long i = 0; i < got;) {
            long j = i;
            while (j + 1 < got && (reg[j + 1].end - reg[i].start) / pg <= PAGEMAP_BATCH)
                j++;
            int64_t run = exclusive_pages(fd, (uintptr_t)(reg[i].start / pg), (size_t)((reg[j].end - reg[i].start) / pg));
            if (run < 0)
                return -1;
            n += run;
            i = j + 1;
        }
        if (a.walk_end <= at)
            return -1; /* no progress: never loop */
        at = a.walk_end;
    }
    return n;
}

/* Private pages really backed by memory, from /proc/self/pagemap: present
 * (bit 63) and exclusively mapped (bit 56). mincore() would also count
 * pages that were only read, which map the shared zero page: the free
 * path's bitmap reads make that a large overestimate. Our arenas are
 * mostly reserved, not touched, and pagemap spends time on every page of
 * a hole: the holes are skipped by PAGEMAP_SCAN, or on older kernels by
 * mincore (a memset per hole page, ~5 ns: a followed PostgreSQL backend's
 * last snapshot looked at 51,000 pages, 0.2 ms of each connection under
 * pgbench -C), and only the runs there are read from pagemap. Not after
 * a seal: neither is a call a verdict allows (the whole range is read
 * then). -1 if unreadable. */
static int64_t pagemap_resident(size_t pg)
{
    if (!pl_seccomp_recheck(HI_GATE_PROC))
        return -1;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int skip_holes = !pl_seccomp_sealed();
    unsigned char vec[4096];
    int64_t resident = 0;
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && resident >= 0; i++) {
        uintptr_t first = (uintptr_t)pl_arena_maps[i].addr / pg;
        size_t pages = pl_arena_maps[i].len / pg;
        if (skip_holes && !pl_scan_refused) {
            int64_t got = scan_resident(fd, first, pages, pg);
            if (got != -2) {
                resident = got < 0 ? -1 : resident + got * (int64_t)pg;
                continue;
            }
            pl_scan_refused = 1;
        }
        for (size_t off = 0; off < pages && resident >= 0;) {
            size_t chunk = pages - off < sizeof(vec) ? pages - off : sizeof(vec);
            int64_t got;
            if (skip_holes && mincore((char *)pl_arena_maps[i].addr + off * pg, chunk * pg, vec) == 0) {
                got = 0;
                for (size_t j = 0; j < chunk && got >= 0;) {
                    /* Mostly holes: eight at a time (mincore's bytes
                     * hold 0 or 1). */
                    uint64_t word;
                    if (j + 8 <= chunk && (memcpy(&word, vec + j, 8), (word & 0x0101010101010101ull) == 0)) {
                        j += 8;
                        continue;
                    }
                    if (!(vec[j] & 1)) {
                        j++;
                        continue;
                    }
                    /* One read for the runs within a read's 512 entries
                     * (a page not there reads as not present): a followed
                     * backend's tables left ~60 short runs, one pread
                     * each. */
                    size_t k = j, last = j;
                    while (k < chunk && k - j < PAGEMAP_BATCH) {
                        if (vec[k] & 1)
                            last = k;
                        k++;
                    }
                    int64_t run = exclusive_pages(fd, first + off + j, last + 1 - j);
                    got = run < 0 ? -1 : got + run;
                    j = last + 1;
                }
            } else {
                got = exclusive_pages(fd, first + off, chunk);
            }
            resident = got < 0 ? -1 : resident + got * (int64_t)pg;
            off += chunk;
        }
    }
    close(fd);
    return resident;
}

uint64_t pl_arena_resident_bytes(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    int64_t pm = pagemap_resident(pg);
    if (pm >= 0)
        return (uint64_t)pm;
    unsigned char vec[4096];
    uint64_t resident = 0;
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        char *base = pl_arena_maps[i].addr;
        size_t pages = pl_arena_maps[i].len / pg;
        for (size_t off = 0; off < pages; off += sizeof(vec)) {
            size_t chunk = pages - off < sizeof(vec) ? pages - off : sizeof(vec);
            if (mincore(base + off * pg, chunk * pg, vec) != 0)
                break;
            for (size_t j = 0; j < chunk; j++)
                resident += (vec[j] & 1) ? pg : 0;
        }
    }
    return resident;
}
