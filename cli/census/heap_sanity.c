/* heap_sanity.c - see heap_sanity.h.
 *
 * A program can live for ever with a heap corruption it never touches
 * again: a fastbin whose list loops (a double free that glibc's
 * fasttop check does not see: free(a), free(b), free(a)), a tcache link
 * overwritten after free. The injection's dlopen calls malloc in that
 * process, and glibc aborts it there ("malloc(): unaligned fastbin chunk
 * detected", SIGABRT, issue 25). glibc's own checks are what matters:
 * each list link is aligned to 16 (malloc.c aligned_OK / misaligned_chunk),
 * a fastbin chunk's size is its bin's ("malloc(): memory corruption
 * (fast)"), an unsorted chunk's size is within the arena's system_mem and
 * its bk's fd points back at it ("malloc(): unsorted double linked list
 * corrupted"); a list that loops makes malloc_consolidate and the
 * tcache refill go round for ever. Links are safe-linked since glibc
 * 2.32 (stored = pointer ^ (address of the link >> 12)).
 */
#include "cli/census/heap_sanity.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/census/libc_layout.h"
#include "cli/util/file_key.h"
#include "injector/elfsym.h"
#include "injector/maps.h"
#include "injector/mem.h"

#define MAX_STEPS 2000000u      /* longer lists are not followed to their end */
#define TCACHE_BINS 64u
#define TCACHE_STRUCT_CHUNK 0x290u /* tcache_perthread_struct's chunk, glibc >= 2.30 */

struct walk {
    pid_t pid;
    struct inj_maps maps;
    bool mangled;
    uint64_t heap_lo, heap_hi;  /* [heap], 0 when none */
    uint64_t system_mem;
    char *why;
    size_t len;
};

static int word(const struct walk *w, uint64_t at, uint64_t *v)
{
    return inj_mem_read(w->pid, at, v, sizeof(*v));
}

static uint64_t reveal(const struct walk *w, uint64_t at, uint64_t v)
{
    return w->mangled ? v ^ (at >> 12) : v;
}

/* A chunk of the heap may live in [heap] or in any private writable
 * mapping (main_arena falls back to mmap when brk fails; tcache may hold
 * chunks of other arenas). */
static bool in_heap(const struct walk *w, uint64_t chunk)
{
    const struct inj_map *m = inj_maps_find_addr(&w->maps, chunk);
    return m && m->perms[0] == 'r' && m->perms[1] == 'w' && m->perms[3] == 'p' && chunk + 32 <= m->end &&
           (!m->path[0] || !strcmp(m->path, "[heap]"));
}

/* Follows a singly linked list from `first` (a chunk address, or the
 * user address for tcache: `user` 16), at most `limit` entries, the link
 * at chunk + 16. size: the chunk size every entry must have (0: any). 1
 * ok, 0 corrupt (why filled, prefixed by `what`). */
static int single_list(struct walk *w, const char *what, uint64_t first, uint64_t user, uint64_t size,
                       uint64_t limit)
{
    uint64_t cur = first, tortoise = first, power = 1, lam = 0;
    for (uint64_t steps = 0; cur && steps < limit; steps++) {
        uint64_t chunk = cur - user, sz, link;
        if (chunk & 15) {
            snprintf(w->why, w->len, "%s: a link to 0x%llx after %llu entries, not 16-byte aligned", what,
                     (unsigned long long)cur, (unsigned long long)steps);
            return 0;
        }
        if (!in_heap(w, chunk) || word(w, chunk + 8, &sz) < 0 || word(w, chunk + 16, &link) < 0) {
            snprintf(w->why, w->len, "%s: a link to 0x%llx after %llu entries, outside the heap", what,
                     (unsigned long long)cur, (unsigned long long)steps);
            return 0;
        }
        if (size && (sz & ~(uint64_t)7) != size) {
            snprintf(w->why, w->len, "%s: chunk 0x%llx (entry %llu) has size %llu, not its bin's %llu", what,
                     (unsigned long long)chunk, (unsigned long long)steps, (unsigned long long)(sz & ~(uint64_t)7),
                     (unsigned long long)size);
            return 0;
        }
        uint64_t next = reveal(w, chunk + 16, link);
        /* Brent's cycle detection: no memory for the entries seen. */
        if (next && next == tortoise) {
            snprintf(w->why, w->len, "%s: the list loops (chunk 0x%llx comes back after %llu entries: a double free)",
                     what, (unsigned long long)(next - user), (unsigned long long)(lam + 1));
            return 0;
        }
        if (++lam == power) {
            tortoise = next;
            power *= 2;
            lam = 0;
        }
        cur = next;
    }
    return 1;
}

static int fastbins(struct walk *w, const struct hi_census_layout *l)
{
    for (uint32_t i = 0; i < l->nfastbins && i < 10; i++) {
        uint64_t head;
        if (word(w, l->main_arena + l->fastbins + 8u * i, &head) < 0)
            return -EIO;
        if (!head)
            continue;
        char what[96];
        uint64_t size = 32u + 16u * i;
        snprintf(what, sizeof(what), "main_arena's fastbin of %llu-byte chunks", (unsigned long long)size);
        if (!single_list(w, what, head, 0, size, MAX_STEPS))
            return 0;
    }
    return 1;
}

/* The main thread's tcache: the first chunk of [heap]. */
static int tcache(struct walk *w)
{
    uint64_t sz;
    if (!w->heap_lo || word(w, w->heap_lo + 8, &sz) < 0 || (sz & ~(uint64_t)7) != TCACHE_STRUCT_CHUNK)
        return 1; /* no tcache there (older glibc, tunables off, or not yet made) */
    uint16_t counts[TCACHE_BINS];
    uint64_t entries[TCACHE_BINS];
    if (inj_mem_read(w->pid, w->heap_lo + 16, counts, sizeof(counts)) < 0 ||
        inj_mem_read(w->pid, w->heap_lo + 16 + sizeof(counts), entries, sizeof(entries)) < 0)
        return -EIO;
    for (unsigned i = 0; i < TCACHE_BINS; i++) {
        if (!entries[i] || !counts[i])
            continue;
        char what[96];
        uint64_t size = 32u + 16u * i;
        snprintf(what, sizeof(what), "the main thread's tcache of %llu-byte chunks", (unsigned long long)size);
        if (!single_list(w, what, entries[i], 16, size, counts[i]))
            return 0;
    }
    return 1;
}

/* The unsorted bin, followed as malloc takes from it (by bk). */
static int unsorted(struct walk *w, const struct hi_census_layout *l)
{
    uint64_t head = l->main_arena + l->bins - 16, cur, tortoise, power = 1, lam = 0;
    if (word(w, head + 24, &cur) < 0)
        return -EIO;
    if (cur == 0)
        return 1; /* main_arena not initialized yet (no malloc so far): its bins are zeros */
    tortoise = cur;
    for (uint64_t steps = 0; cur != head && steps < MAX_STEPS; steps++) {
        uint64_t sz, bk, bk_fd;
        if ((cur & 15) || !in_heap(w, cur) || word(w, cur + 8, &sz) < 0 || word(w, cur + 24, &bk) < 0) {
            snprintf(w->why, w->len, "main_arena's unsorted bin: a link to 0x%llx after %llu entries, %s",
                     (unsigned long long)cur, (unsigned long long)steps,
                     (cur & 15) ? "not 16-byte aligned" : "outside the heap");
            return 0;
        }
        sz &= ~(uint64_t)7;
        if (sz < 32 || (w->system_mem && sz > w->system_mem)) {
            snprintf(w->why, w->len, "main_arena's unsorted bin: chunk 0x%llx has size %llu", (unsigned long long)cur,
                     (unsigned long long)sz);
            return 0;
        }
        if (word(w, bk + 16, &bk_fd) < 0 || bk_fd != cur) {
            snprintf(w->why, w->len, "main_arena's unsorted bin: chunk 0x%llx's back link does not point back at it",
                     (unsigned long long)cur);
            return 0;
        }
        if (bk == tortoise && bk != head) {
            snprintf(w->why, w->len, "main_arena's unsorted bin: the list loops without its head");
            return 0;
        }
        if (++lam == power) {
            tortoise = bk;
            power *= 2;
            lam = 0;
        }
        cur = bk;
    }
    return 1;
}

/* libc_mangles' answers by libc file (device, inode, size, mtime): the
 * processes of one command mostly map the same libc, and reading its
 * symbol table for each was measurable (attaches run in threads). */
#define MANGLES_MAX 8
static struct {
    struct stat st;
    bool yes;
} mangles[MANGLES_MAX];
static size_t nmangles;
static pthread_mutex_t mangles_lock = PTHREAD_MUTEX_INITIALIZER;

/* Safe-linking came with glibc 2.32, and so did __libc_single_threaded. */
static bool libc_mangles(pid_t pid, const struct inj_maps *m)
{
    const struct inj_map *libc = inj_maps_find_module(m, inj_maps_is_libc);
    struct inj_elf *elf;
    struct stat st;
    uint64_t v, s;
    if (!libc)
        return true;
    int fd = inj_maps_open_file(pid, libc);
    if (fd < 0)
        return true;
    if (fstat(fd, &st) < 0) {
        if (inj_elf_open(fd, &elf) < 0) /* takes fd */
            return true;
        bool yes = inj_elf_symbol(elf, "__libc_single_threaded", &v, &s) == 0;
        inj_elf_close(elf);
        return yes;
    }
    /* Held while the first asker reads the file: the command's attaches
     * start together. */
    pthread_mutex_lock(&mangles_lock);
    for (size_t i = 0; i < nmangles; i++)
        if (cli_same_file(&mangles[i].st, &st)) {
            bool yes = mangles[i].yes;
            pthread_mutex_unlock(&mangles_lock);
            close(fd);
            return yes;
        }
    bool yes = true;
    if (inj_elf_open(fd, &elf) == 0) { /* takes fd */
        yes = inj_elf_symbol(elf, "__libc_single_threaded", &v, &s) == 0;
        inj_elf_close(elf);
        if (nmangles < MANGLES_MAX) {
            mangles[nmangles].st = st;
            mangles[nmangles++].yes = yes;
        }
    }
    pthread_mutex_unlock(&mangles_lock);
    return yes;
}

/* One look at the heap, with pid's maps m (read just before). */
static int check_in(pid_t pid, const struct inj_maps *m, char *why, size_t len)
{
    struct hi_census_layout l;
    char where[512];
    struct walk w = { .pid = pid, .why = why, .len = len, .maps = *m };
    int rc;
    if ((rc = cli_census_libc_layout_in(pid, m, &l, where, sizeof(where))) < 0) {
        snprintf(why, len, "%s", where);
        return rc;
    }
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].path, "[heap]")) {
            w.heap_lo = m->v[i].start;
            w.heap_hi = m->v[i].end;
            break;
        }
    w.mangled = libc_mangles(pid, m);
    if (l.system_mem)
        word(&w, l.main_arena + l.system_mem, &w.system_mem);
    rc = fastbins(&w, &l);
    if (rc == 1)
        rc = tcache(&w);
    if (rc == 1 && l.bins)
        rc = unsorted(&w, &l);
    return rc;
}

static int check_once(pid_t pid, char *why, size_t len)
{
    struct inj_maps m;
    int rc;
    if ((rc = inj_maps_read(pid, &m)) < 0)
        return rc;
    rc = check_in(pid, &m, why, len);
    inj_maps_free(&m);
    return rc;
}

/* The process runs while we read: a list changing under us (a chunk taken
 * and reused between two reads) can look broken once. A latent corruption
 * stays put: only the same finding three times over, 20 ms apart, is one. */
int cli_heap_sanity_check(pid_t pid, char *why, size_t len)
{
    return cli_heap_sanity_check_in(pid, NULL, why, len);
}

int cli_heap_sanity_check_in(pid_t pid, const struct inj_maps *maps, char *why, size_t len)
{
    char first[512];
    int rc = maps ? check_in(pid, maps, why, len) : check_once(pid, why, len);
    if (rc != 0)
        return rc;
    snprintf(first, sizeof(first), "%s", why);
    /* the looks again read the maps afresh */
    for (int i = 0; i < 2; i++) {
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
        rc = check_once(pid, why, len);
        if (rc != 0 || strcmp(why, first) != 0)
            return rc < 0 ? rc : 1;
    }
    return 0;
}
