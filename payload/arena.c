/* arena.c - bounded mmap'ed memory for the payload's tables. */
#include "arena.h"
#include "payload/seccomp_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define PL_ARENA_MAX_MAPS 32

struct pl_arena_map {
    void *addr;
    size_t len;
};

/* Appended under the start lock (start.c); read by the agent. */
static struct pl_arena_map pl_arena_maps[PL_ARENA_MAX_MAPS];
static unsigned pl_arena_nmaps;

static size_t page_round(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + pg - 1) & ~(pg - 1);
}

void *pl_arena_map(size_t bytes)
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
    pl_arena_maps[n].addr = p;
    pl_arena_maps[n].len = len;
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

/* Private pages really backed by memory, from /proc/self/pagemap: present
 * (bit 63) and exclusively mapped (bit 56). mincore() would also count
 * pages that were only read, which map the shared zero page: the free
 * path's bitmap reads make that a large overestimate. -1 if unreadable. */
static int64_t pagemap_resident(size_t pg)
{
    if (!pl_seccomp_recheck(HI_GATE_PROC))
        return -1;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t ent[512];
    int64_t resident = 0;
    unsigned n = __atomic_load_n(&pl_arena_nmaps, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && resident >= 0; i++) {
        uintptr_t first = (uintptr_t)pl_arena_maps[i].addr / pg;
        size_t pages = pl_arena_maps[i].len / pg;
        for (size_t off = 0; off < pages;) {
            size_t chunk = pages - off < 512 ? pages - off : 512;
            ssize_t r = pread(fd, ent, chunk * sizeof(uint64_t), (off_t)((first + off) * sizeof(uint64_t)));
            if (r <= 0) {
                resident = -1;
                break;
            }
            size_t got = (size_t)r / sizeof(uint64_t);
            for (size_t j = 0; j < got; j++)
                if ((ent[j] >> 63) & (ent[j] >> 56) & 1)
                    resident += (int64_t)pg;
            off += got;
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
