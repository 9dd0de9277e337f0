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
 *
 * The process runs while we read, and a list read word by word is not one
 * state: a tcache head read, then that chunk taken by malloc and its first
 * word written by the program before we read it, looks like a corrupt
 * link (seen in CI: "a link to 0x...e6a after 1 entries, not 16-byte
 * aligned" on a healthy churning process, three looks running, its
 * syscalls slowed by strace; one look in 3 to 30 was misled so by a
 * busier program, tests/unit/cli_census_heap_sanity.c). So a finding
 * stands only when the list's head and the word it was read from still
 * hold what they held once it is made (struct seen), and the next walk
 * from a fresh head finds it again word for word (settled); a tcache
 * entry that has lost the key free entries carry was taken under us
 * (tcache_key_of). A list that keeps changing is taken as healthy: a
 * corruption stays put.
 */
#include "cli/census/heap_sanity.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
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
#define WALK_TRIES 6            /* walks of a list that changed under us before it is let be */

/* Results of one walk of a list. */
enum { LIST_CORRUPT = 0, LIST_OK = 1, LIST_MOVED = 2 };

/* A word as it was read: where, and what it held. */
struct seen {
    uint64_t at, val;
};

struct walk {
    pid_t pid;
    struct inj_maps maps;
    bool mangled;
    uint64_t heap_lo, heap_hi;  /* [heap], 0 when none */
    uint64_t system_mem;
    bool key_known;             /* the tcache's key was told (tcache_key_of) */
    uint64_t key;
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

/* Did both words keep what they held? Read after a finding, they tell a
 * list that changed under us from one that is broken. */
static bool still(const struct walk *w, const struct seen *a, const struct seen *b)
{
    uint64_t v;
    return word(w, a->at, &v) == 0 && v == a->val && word(w, b->at, &v) == 0 && v == b->val;
}

/* A finding, if it stands: LIST_CORRUPT with why filled when the head
 * and the culprit word are unchanged, LIST_MOVED (why untouched)
 * otherwise. */
static int finding(struct walk *w, const struct seen *head, const struct seen *culprit, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int finding(struct walk *w, const struct seen *head, const struct seen *culprit, const char *fmt, ...)
{
    if (!still(w, head, culprit))
        return LIST_MOVED;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, w->len, fmt, ap);
    va_end(ap);
    return LIST_CORRUPT;
}

/* Follows a singly linked list whose head (a chunk address, or the user
 * address for tcache: `user` 16) was read as `head`, at most `limit`
 * entries, the link at chunk + 16. size: the chunk size every entry must
 * have (0: any). LIST_OK, LIST_CORRUPT (why filled, prefixed by `what`)
 * or LIST_MOVED. */
static int single_list(struct walk *w, const char *what, struct seen head, uint64_t user, uint64_t size,
                       uint64_t limit)
{
    uint64_t cur = head.val, tortoise = head.val, power = 1, lam = 0;
    struct seen from = head; /* the word cur was read from */
    for (uint64_t steps = 0; cur && steps < limit; steps++) {
        uint64_t chunk = cur - user, words[3]; /* size, link, and a tcache entry's key */
        if (chunk & 15)
            return finding(w, &head, &from, "%s: a link to 0x%llx after %llu entries, not 16-byte aligned", what,
                           (unsigned long long)cur, (unsigned long long)steps);
        if (!in_heap(w, chunk) || inj_mem_read(w->pid, chunk + 8, words, sizeof(words)) < 0)
            return finding(w, &head, &from, "%s: a link to 0x%llx after %llu entries, outside the heap", what,
                           (unsigned long long)cur, (unsigned long long)steps);
        uint64_t sz = words[0], link = words[1];
        if (size && (sz & ~(uint64_t)7) != size) {
            struct seen size_word = { chunk + 8, sz };
            return finding(w, &head, &size_word, "%s: chunk 0x%llx (entry %llu) has size %llu, not its bin's %llu",
                           what, (unsigned long long)chunk, (unsigned long long)steps,
                           (unsigned long long)(sz & ~(uint64_t)7), (unsigned long long)size);
        }
        /* A tcache entry without the key is no longer free: malloc took
         * it after its link was read (it clears the key), and what the
         * program wrote there since is no link. */
        if (user && w->key_known && words[2] != w->key)
            return LIST_MOVED;
        from = (struct seen){ chunk + 16, link };
        uint64_t next = reveal(w, chunk + 16, link);
        /* Brent's cycle detection: no memory for the entries seen. */
        if (next && next == tortoise)
            return finding(w, &head, &from,
                           "%s: the list loops (chunk 0x%llx comes back after %llu entries: a double free)", what,
                           (unsigned long long)(next - user), (unsigned long long)(lam + 1));
        if (++lam == power) {
            tortoise = next;
            power *= 2;
            lam = 0;
        }
        cur = next;
    }
    return LIST_OK;
}

/* Which list a walk reads: main_arena's fastbin or the tcache's bin
 * `bin`, or the unsorted bin. */
struct list_ref {
    const struct hi_census_layout *l;
    unsigned bin;
    char what[96];
};
typedef int (*walk_fn)(struct walk *w, const struct list_ref *r);

/* One walk's finding is a state the list passed through while we read
 * (a chunk taken and freed again can make a list seem to loop); it
 * stands when the next walk, from a fresh head, finds it again word for
 * word. Walked anew while it changes, at most WALK_TRIES times; a list
 * that never settles is let be. 1, 0 (why filled) or -errno. */
static int settled(struct walk *w, walk_fn walk, const struct list_ref *r)
{
    char before[512] = "";
    for (int t = 0; t < WALK_TRIES; t++) {
        int rc = walk(w, r);
        if (rc < 0 || rc == LIST_OK)
            return rc < 0 ? rc : 1;
        if (rc == LIST_CORRUPT) {
            if (before[0] && !strcmp(before, w->why))
                return 0;
            snprintf(before, sizeof(before), "%s", w->why);
        } else {
            before[0] = '\0';
        }
    }
    return 1;
}

static int fastbin_walk(struct walk *w, const struct list_ref *r)
{
    struct seen head = { r->l->main_arena + r->l->fastbins + 8u * r->bin, 0 };
    if (word(w, head.at, &head.val) < 0)
        return -EIO;
    return head.val ? single_list(w, r->what, head, 0, 32u + 16u * r->bin, MAX_STEPS) : LIST_OK;
}

static int fastbins(struct walk *w, const struct hi_census_layout *l)
{
    for (uint32_t i = 0; i < l->nfastbins && i < 10; i++) {
        struct list_ref r = { .l = l, .bin = i };
        snprintf(r.what, sizeof(r.what), "main_arena's fastbin of %u-byte chunks", 32u + 16u * i);
        int rc = settled(w, fastbin_walk, &r);
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* A free tcache chunk's second word is its key (glibc 2.29 to 2.33: the
 * tcache's address; 2.34 and later: one random value), the same in every
 * entry of every bin; tcache_get clears it. Told by the heads' keys: the
 * value most of them hold, when two or more do (older glibc has no key,
 * and then no value repeats). A corruption that overwrites the key with
 * the link (a use after free of 16 bytes) is then taken for a chunk in
 * use and not reported: glibc would abort the program at its own next
 * malloc of that size too, and a healthy busy process refused is the
 * worse mistake (CI refused one). */
static void tcache_key_of(struct walk *w, const uint16_t *counts, const uint64_t *entries)
{
    uint64_t keys[TCACHE_BINS];
    unsigned n = 0, best = 0;
    for (unsigned i = 0; i < TCACHE_BINS; i++)
        if (entries[i] && counts[i] && !(entries[i] & 15) && word(w, entries[i] + 8, &keys[n]) == 0 && keys[n])
            n++;
    w->key_known = false;
    for (unsigned i = 0; i < n; i++) {
        unsigned same = 0;
        for (unsigned j = 0; j < n; j++)
            same += keys[j] == keys[i];
        if (same >= 2 && same > best) {
            best = same;
            w->key = keys[i];
            w->key_known = true;
        }
    }
}

/* One walk of the tcache's bin r->bin, its count and head read afresh. */
static int tcache_walk(struct walk *w, const struct list_ref *r)
{
    const uint64_t counts_at = w->heap_lo + 16, entries_at = counts_at + 2u * TCACHE_BINS;
    uint16_t count;
    struct seen head = { entries_at + 8u * r->bin, 0 };
    if (inj_mem_read(w->pid, counts_at + 2u * r->bin, &count, sizeof(count)) < 0 || word(w, head.at, &head.val) < 0)
        return -EIO;
    return head.val && count ? single_list(w, r->what, head, 16, 32u + 16u * r->bin, count) : LIST_OK;
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
    tcache_key_of(w, counts, entries);
    for (unsigned i = 0; i < TCACHE_BINS; i++) {
        if (!entries[i] || !counts[i])
            continue;
        struct list_ref r = { .bin = i };
        snprintf(r.what, sizeof(r.what), "the main thread's tcache of %u-byte chunks", 32u + 16u * i);
        int rc = settled(w, tcache_walk, &r);
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* The unsorted bin, followed as malloc takes from it (by bk): one walk. */
static int unsorted_walk(struct walk *w, const struct list_ref *r)
{
    const uint64_t head = r->l->main_arena + r->l->bins - 16;
    struct seen first = { head + 24, 0 };
    uint64_t cur, tortoise, power = 1, lam = 0;
    if (word(w, first.at, &first.val) < 0)
        return -EIO;
    cur = first.val;
    if (cur == 0)
        return LIST_OK; /* main_arena not initialized yet (no malloc so far): its bins are zeros */
    tortoise = cur;
    struct seen from = first; /* the word cur was read from */
    for (uint64_t steps = 0; cur != head && steps < MAX_STEPS; steps++) {
        uint64_t sz, bk, bk_fd;
        if ((cur & 15) || !in_heap(w, cur) || word(w, cur + 8, &sz) < 0 || word(w, cur + 24, &bk) < 0)
            return finding(w, &first, &from, "main_arena's unsorted bin: a link to 0x%llx after %llu entries, %s",
                           (unsigned long long)cur, (unsigned long long)steps,
                           (cur & 15) ? "not 16-byte aligned" : "outside the heap");
        struct seen size_word = { cur + 8, sz };
        sz &= ~(uint64_t)7;
        if (sz < 32 || (w->system_mem && sz > w->system_mem))
            return finding(w, &first, &size_word, "main_arena's unsorted bin: chunk 0x%llx has size %llu",
                           (unsigned long long)cur, (unsigned long long)sz);
        from = (struct seen){ cur + 24, bk };
        int got = word(w, bk + 16, &bk_fd);
        if (got < 0 || bk_fd != cur) {
            struct seen back = { bk + 16, bk_fd };
            if (got == 0 && !still(w, &from, &back))
                return LIST_MOVED;
            return finding(w, &first, &from,
                           "main_arena's unsorted bin: chunk 0x%llx's back link does not point back at it",
                           (unsigned long long)cur);
        }
        if (bk == tortoise && bk != head)
            return finding(w, &first, &from, "main_arena's unsorted bin: the list loops without its head");
        if (++lam == power) {
            tortoise = bk;
            power *= 2;
            lam = 0;
        }
        cur = bk;
    }
    return LIST_OK;
}

static int unsorted(struct walk *w, const struct hi_census_layout *l)
{
    struct list_ref r = { .l = l };
    return settled(w, unsorted_walk, &r);
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

int cli_heap_sanity_look(pid_t pid, char *why, size_t len)
{
    return check_once(pid, why, len);
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
