/* census_uncopied.c - the agent reads the memory its fork does not copy
 * (see census_uncopied.h for why and what it costs). Agent thread only: no
 * malloc (the hooks), no stdio; scratch memory from mmap. */
#include "payload/census/uncopied.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/maps_line.h"
#include "payload/sys/sys.h"

#define TARGETS_MAX 65536u      /* copied anonymous writable mappings */
#define SMAPS_BUF (256u << 10)  /* smaps read window */
#define READ_CHUNK (1u << 20)   /* memory read at a time */
#define PAGEMAP_BATCH 512u

struct range {
    uintptr_t lo, hi;
};

/* Scratch memory of one scan, one mapping: [smaps window | targets | chunk | pagemap]. */
struct scratch {
    char *smaps;
    struct range *targets;
    unsigned n_targets;
    uintptr_t tmin, tmax;
    uintptr_t *chunk;
    uint64_t *pm;
    int pagemap;
};

#define SCRATCH_BYTES (SMAPS_BUF + TARGETS_MAX * sizeof(struct range) + READ_CHUNK + PAGEMAP_BATCH * 8u)

struct pl_uncopied *pl_uncopied_create(void)
{
    void *p = mmap(NULL, PL_UNCOPIED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    struct pl_uncopied *u = p;
    u->max_values = (PL_UNCOPIED_BYTES - sizeof(*u)) / sizeof(uintptr_t);
    return u;
}

void pl_uncopied_destroy(struct pl_uncopied *u)
{
    if (u)
        munmap(u, PL_UNCOPIED_BYTES);
}

static int excluded(const struct pl_census_range *ex, unsigned n, uintptr_t lo, uintptr_t hi)
{
    for (unsigned i = 0; i < n; i++)
        if (lo < ex[i].hi && ex[i].lo < hi)
            return 1;
    return 0;
}

/* Anonymous memory where heap blocks can live: no file, and a name the
 * kernel gives anonymous memory ([heap], [stack], [anon:...]) or none. */
static int anonymous(const struct hi_maps_line *l)
{
    if (l->inode)
        return 0;
    if (!l->path)
        return 1;
    return l->path[0] == '[' && (!strncmp(l->path, "[heap]", 6) || !strncmp(l->path, "[anon:", 6));
}

/* VmFlags has "dc" (MADV_DONTFORK) or "wf" (MADV_WIPEONFORK). */
static int uncopied_flags(const char *p, const char *end)
{
    for (p += 8; p + 2 <= end; p++)
        if (p[-1] == ' ' && (p + 2 == end || p[2] == ' ') &&
            ((p[0] == 'd' && p[1] == 'c') || (p[0] == 'w' && p[1] == 'f')))
            return 1;
    return 0;
}

/* One pass over /proc/self/smaps: the copied anonymous writable private
 * mappings into s->targets, the readable uncopied ones into u->maps. */
static int find_mappings(struct pl_uncopied *u, struct scratch *s, const struct pl_census_range *ex, unsigned nex,
                         uint32_t *found)
{
    int fd = pl_proc_open_self("smaps");
    if (fd < 0)
        return fd;
    struct hi_maps_line cur;
    int have = 0, cur_targetable = 0, cur_readable = 0;
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, s->smaps + len, SMAPS_BUF - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        struct hi_maps_lines it = hi_maps_lines_of(s->smaps, len);
        it.whole = true; /* a cut last line waits for the next read */
        const char *p, *nl;
        while (hi_maps_lines_next(&it, &p, &nl)) {
            int hexdigit = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');
            if (hexdigit && hi_maps_line_parse(p, nl, &cur)) {
                have = 1;
                cur_readable = cur.perms[0] == 'r' && !excluded(ex, nex, cur.start, cur.end);
                /* Targets keep our own ranges: the kernel merges our arenas
                 * with the program's anonymous memory into one line, and a
                 * word pointing at our memory finds no block in the child. */
                cur_targetable = cur.perms[0] == 'r' && cur.perms[1] == 'w' && cur.perms[3] == 'p' &&
                                 anonymous(&cur);
            } else if (have && nl - p >= 8 && !memcmp(p, "VmFlags:", 8)) {
                if (uncopied_flags(p, nl)) {
                    if (cur_readable) {
                        u->total_bytes += cur.end - cur.start;
                        if (*found < PL_UNCOPIED_MAX_MAPS) {
                            struct pl_uncopied_map *m = &u->maps[(*found)++];
                            m->lo = cur.start;
                            m->hi = cur.end;
                        }
                    }
                } else if (cur_targetable && s->n_targets < TARGETS_MAX) {
                    s->targets[s->n_targets].lo = cur.start;
                    s->targets[s->n_targets++].hi = cur.end;
                }
                have = 0;
            }
        }
        len = (size_t)(it.end - it.p);
        memmove(s->smaps, it.p, len);
        if (len == SMAPS_BUF) /* a line longer than the window: drop it */
            len = 0;
    }
    close(fd);
    if (s->n_targets) {
        s->tmin = s->targets[0].lo;
        s->tmax = s->targets[s->n_targets - 1].hi;
    }
    return 0;
}

static int points_into_target(const struct scratch *s, uintptr_t v)
{
    if (v < s->tmin || v >= s->tmax)
        return 0;
    unsigned lo = 0, hi = s->n_targets;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (v < s->targets[mid].lo)
            hi = mid;
        else if (v >= s->targets[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* Whether the page at index pg is present or swapped (1), neither (0);
 * 1 when the pagemap cannot be read (then everything is read). */
static int page_has_data(struct scratch *s, uint64_t pg, uint64_t *first, uint64_t *n)
{
    if (s->pagemap < 0)
        return 1;
    if (pg < *first || pg >= *first + *n) {
        ssize_t r = pread(s->pagemap, s->pm, PAGEMAP_BATCH * 8u, (off_t)(pg * 8));
        if (r < 8) {
            *n = 0;
            return 1;
        }
        *first = pg;
        *n = (uint64_t)r / 8;
    }
    return (s->pm[pg - *first] >> 62) != 0;
}

/* Reads [lo, hi) (present pages only) and keeps the words that point into
 * copied memory. 0, or -1 when out of room or time (this mapping and the
 * rest stay unpublished: the child counts them as not read). */
static int read_mapping(struct pl_uncopied *u, struct scratch *s, struct pl_uncopied_map *m, uint64_t deadline_ns)
{
    uint64_t pm_first = 0, pm_n = 0;
    m->first = u->n_values;
    uintptr_t pos = m->lo;
    while (pos < m->hi) {
        if (pl_now_ns() > deadline_ns)
            return -1;
        /* the next run of pages with data, at most READ_CHUNK long */
        while (pos < m->hi && !page_has_data(s, pos / 4096, &pm_first, &pm_n))
            pos += 4096;
        uintptr_t run = pos;
        while (run < m->hi && run - pos < READ_CHUNK && page_has_data(s, run / 4096, &pm_first, &pm_n))
            run += 4096;
        if (run == pos)
            break;
        struct iovec local = { s->chunk, run - pos }, remote = { (void *)pos, run - pos };
        ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r <= 0) { /* unmapped meanwhile, or not readable after all */
            m->unread_bytes += run - pos;
            pos = run;
            continue;
        }
        m->read_bytes += (uint64_t)r;
        for (size_t k = 0; k < (size_t)r / sizeof(uintptr_t); k++) {
            uintptr_t v = s->chunk[k];
            if (!points_into_target(s, v))
                continue;
            if (u->n_values == u->max_values)
                return -1;
            u->values[u->n_values++] = v;
        }
        pos += (uintptr_t)r;
    }
    m->count = u->n_values - m->first;
    return 0;
}

void pl_uncopied_scan(struct pl_uncopied *u, const struct pl_census_range *exclude, unsigned n_exclude,
                      uint64_t deadline_ns)
{
    char *mem = mmap(NULL, SCRATCH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        __atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
        return;
    }
    struct scratch s = { .smaps = mem };
    s.targets = (struct range *)(mem + SMAPS_BUF);
    s.chunk = (uintptr_t *)(mem + SMAPS_BUF + TARGETS_MAX * sizeof(struct range));
    s.pm = (uint64_t *)((char *)s.chunk + READ_CHUNK);
    s.pagemap = -1;
    /* maps[] is filled first, then published (n_maps) one by one as it is
     * read: a child that stops waiting sees only mappings read whole */
    uint32_t found = 0;
    if (find_mappings(u, &s, exclude, n_exclude, &found) < 0)
        found = 0;
    if (found)
        s.pagemap = pl_proc_open_self("pagemap");
    for (uint32_t i = 0; i < found; i++) {
        struct pl_uncopied_map *m = &u->maps[i];
        if (read_mapping(u, &s, m, deadline_ns) < 0) {
            u->n_values = m->first; /* the partial mapping is not published */
            break;
        }
        __atomic_store_n(&u->n_maps, i + 1, __ATOMIC_RELEASE);
    }
    if (s.pagemap >= 0)
        close(s.pagemap);
    munmap(mem, SCRATCH_BYTES);
    __atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
}
