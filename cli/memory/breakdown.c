/* breakdown.c - resident bytes by holder (see breakdown.h for the method). */
#include "cli/memory/breakdown.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/process/exe_alloc.h"
#include "cli/process/paths.h"

/* glibc's HEAP_MAX_SIZE on 64-bit: 2 * DEFAULT_MMAP_THRESHOLD_MAX. Every
 * non-main arena heap is a mapping of at most this size, aligned to it. */
#define GLIBC_HEAP_MAX (64ull << 20)

enum vma_class { VC_ANON, VC_FILE, VC_OTHER, VC_STACK, VC_GHEAP, VC_GMMAP };

static const char *const part_keys[CLI_MEM_NPARTS] = {
    [CLI_MEM_HEAP_IN_USE] = "heap_in_use", [CLI_MEM_HEAP_FREE] = "heap_free",
    [CLI_MEM_HEAP_UNSPLIT] = "heap_unsplit", [CLI_MEM_MMAP] = "mmap",
    [CLI_MEM_STACKS] = "stacks", [CLI_MEM_FILES] = "files",
    [CLI_MEM_OTHER] = "other", [CLI_MEM_UNPLACED] = "unplaced",
};

const char *cli_memory_part_key(enum cli_mem_part part)
{
    return part < CLI_MEM_NPARTS ? part_keys[part] : "?";
}

const char *cli_memory_allocator_name(uint32_t allocator)
{
    switch (allocator) {
    case HI_ALLOC_GLIBC: return "glibc";
    case HI_ALLOC_JEMALLOC: return "jemalloc";
    case HI_ALLOC_TCMALLOC: return "tcmalloc";
    case HI_ALLOC_MIMALLOC: return "mimalloc";
    default: return "unknown";
    }
}

void cli_memory_note(struct cli_memory *m, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    if (m->nnotes >= CLI_MEM_MAX_NOTES)
        return;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s)
        m->notes[m->nnotes++] = s;
}

void cli_memory_free(struct cli_memory *m)
{
    for (size_t i = 0; i < m->nnotes; i++)
        free(m->notes[i]);
    m->nnotes = 0;
}

static bool is_anon(const struct cli_smaps_vma *v)
{
    return !v->path || strncmp(v->path, "[anon:", 6) == 0 || strncmp(v->path, "/anon_hugepage", 14) == 0;
}

/* First pass: what the kernel's name alone says. */
static enum vma_class by_name(const struct cli_smaps_vma *v)
{
    const char *p = v->path;
    if (is_anon(v))
        return VC_ANON;
    if (strcmp(p, "[stack]") == 0 || strncmp(p, "[stack:", 7) == 0)
        return VC_STACK;
    if (strcmp(p, "[heap]") == 0)
        return VC_ANON; /* decided with the allocator */
    if (p[0] == '[')
        return VC_OTHER; /* [vdso], [vvar], [vsyscall], [anon_shmem:...] */
    /* Shared memory is no module's code or data. */
    if (strncmp(p, "/dev/shm/", 9) == 0 || strncmp(p, "/SYSV", 5) == 0 || strncmp(p, "/memfd:", 7) == 0 ||
        strncmp(p, "/dev/zero", 9) == 0 || v->inode == 0)
        return VC_OTHER;
    return VC_FILE;
}

/* Whether an anonymous mapping above a guard is a pthread stack: glibc
 * (and musl) put the thread's TCB, struct pthread, at the top of the stack
 * block, and its tcbhead_t begins {tcb, dtv, self} with tcb == self == its
 * own address, 64-byte aligned, within the last 2-3 KiB (glibc 2.36: 2368
 * bytes below the end). Allocators that reserve address space and commit
 * it piece by piece leave the same guard-then-rw-p pattern in the maps
 * (Chromium's PartitionAlloc: 2 MiB super pages behind 4 KiB guards; V8,
 * the JVM's heap), and once counted 20 MiB of a browser's heap as
 * stacks. The last 8 KiB are read. 1: a TCB is there; 0: readable, none
 * there; -1: unreadable (the guard alone then decides, as before). */
#define TCB_SCAN (8u << 10)
static int pthread_stack(const struct cli_smaps_vma *v, cli_mem_reader read, void *ctx)
{
    static uint64_t w[TCB_SCAN / 8];
    uint64_t lo = v->end - TCB_SCAN;

    if (!read || v->end - v->start < TCB_SCAN || read(ctx, lo, w, sizeof(w)) < 0)
        return -1;
    for (size_t i = 0; i + 2 < TCB_SCAN / 8; i += 64 / 8)
        if (w[i] == lo + i * 8 && w[i + 2] == lo + i * 8)
            return 1;
    return 0;
}

/* An arena heap of glibc: 64 MiB-aligned, starting with struct heap_info
 * {ar_ptr, prev, size, mprotect_size[, pagesize]}. *first: the arena's
 * first heap (its malloc_state follows heap_info, padded to 32 or 48). */
static bool glibc_arena_heap(const struct cli_smaps *s, size_t i, cli_mem_reader read, void *ctx, bool *first)
{
    const struct cli_smaps_vma *v = &s->v[i];
    *first = false;
    if ((v->start & (GLIBC_HEAP_MAX - 1)) || strcmp(v->perms, "rw-p") || v->end - v->start > GLIBC_HEAP_MAX)
        return false;
    if (read) {
        /* The header decides; a mapping that cannot be read is not taken
         * for an arena on its shape (a 64 MiB direct mmap can be aligned). */
        uint64_t h[4];
        if (read(ctx, v->start, h, sizeof(h)) != 0)
            return false;
        uint64_t off = h[0] & (GLIBC_HEAP_MAX - 1);
        if ((off != 32 && off != 48) || h[2] > GLIBC_HEAP_MAX || h[3] > GLIBC_HEAP_MAX || h[2] == 0)
            return false;
        *first = h[0] == v->start + off;
        return true;
    }
    /* No memory to read: by shape alone, the rw part of a 64 MiB
     * reservation whose rest is PROT_NONE. */
    bool tail = i + 1 < s->n && s->v[i + 1].start == v->end && strcmp(s->v[i + 1].perms, "---p") == 0 &&
                is_anon(&s->v[i + 1]) && s->v[i + 1].end - v->start == GLIBC_HEAP_MAX;
    *first = tail || v->end - v->start == GLIBC_HEAP_MAX;
    return *first;
}

/* Bytes at the start of an anonymous mapping that are glibc blocks mmapped
 * on their own: chunk header {prev_size, size|IS_MMAPPED} whose size (plus
 * the alignment slack in prev_size) spans whole pages. Adjacent mappings
 * with the same protection merge into one VMA, so the chunks are walked. */
static uint64_t glibc_mmapped_chunks(const struct cli_smaps_vma *v, uint64_t from, cli_mem_reader read,
                                     void *ctx)
{
    uint64_t pos = from, n = 0;
    /* glibc mmaps a block on its own from M_MMAP_THRESHOLD up (128 KiB by
     * default; mallopt may lower it): smaller mappings are not read, which
     * keeps a process with 10,000 small mappings cheap to look at. */
    if (!read || strcmp(v->perms, "rw-p") || v->end - from < (32u << 10))
        return 0;
    for (int k = 0; k < 4096 && pos < v->end; k++) {
        uint64_t h[2];
        if (read(ctx, pos, h, sizeof(h)) != 0)
            break;
        uint64_t size = h[1] & ~(uint64_t)7, total = size + h[0];
        if ((h[1] & 7) != 2 || h[0] & 15 || size < 4096 || total & 4095 || total > v->end - pos)
            break;
        n += total;
        pos += total;
    }
    return n;
}

/* The resident bytes of [lo, hi), part of v: the pagemap's count when
 * there is one, else v's Rss shared out by length. Never more than v's Rss
 * (the pagemap is read a moment after smaps). */
static uint64_t resident_part(const struct cli_smaps_vma *v, uint64_t lo, uint64_t hi, cli_mem_resident resident,
                              void *ctx)
{
    uint64_t len = v->end - v->start;
    int64_t r = resident && hi > lo ? resident(ctx, lo, hi) : -1;

    if (hi <= lo)
        return 0;
    if (r >= 0)
        return (uint64_t)r < v->rss ? (uint64_t)r : v->rss;
    return hi - lo >= len ? v->rss : (uint64_t)((double)v->rss * (double)(hi - lo) / (double)len);
}

/* End of the .bss of the module whose file mapping s->v[i] is: the module's
 * ELF header (read from the target at its first mapping, offset 0) gives
 * the last PT_LOAD's vaddr + memsz. 0 when it cannot be read. A direct
 * mmap placed right after a module is a neighbour, not the module's, so
 * the adjacency alone is not taken as proof. */
static uint64_t module_bss_end(const struct cli_smaps *s, size_t i, cli_mem_reader read, void *ctx)
{
    const char *path = s->v[i].path;
    size_t k = i + 1;
    while (k-- > 0)
        if (s->v[k].path && strcmp(s->v[k].path, path) == 0 && s->v[k].offset == 0)
            break;
    if (k == (size_t)-1)
        return 0;
    return cli_image_end(s->v[k].start, read, ctx);
}

static bool contains_sp(const struct cli_smaps_vma *v, const uint64_t *sps, size_t nsps)
{
    for (size_t i = 0; i < nsps; i++)
        if (sps[i] >= v->start && sps[i] < v->end)
            return true;
    return false;
}

struct mod_rss {
    const char *path;
    uint64_t rss;
};

static int cmp_path(const void *a, const void *b)
{
    return strcmp(((const struct mod_rss *)a)->path, ((const struct mod_rss *)b)->path);
}

static int cmp_rss(const void *a, const void *b)
{
    const struct mod_rss *x = a, *y = b;
    return x->rss != y->rss ? (x->rss > y->rss ? -1 : 1) : strcmp(x->path, y->path);
}

static void runtimes(const char *path, struct cli_memory *m)
{
    const char *b = cli_paths_basename(path);
    if (strncmp(b, "libpython", 9) == 0 || strncmp(b, "python3", 7) == 0 || strncmp(b, "python2", 7) == 0)
        m->python = true;
    else if (strcmp(b, "libjvm.so") == 0)
        m->jvm = true;
    else if (strcmp(b, "node") == 0 || strncmp(b, "libnode.so", 10) == 0 || strncmp(b, "nodejs", 6) == 0)
        m->node = true;
}

/* Top modules by resident file bytes. */
static int top_modules(struct mod_rss *mods, size_t n, struct cli_memory *m)
{
    if (!n)
        return 0;
    qsort(mods, n, sizeof(*mods), cmp_path);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && strcmp(mods[k - 1].path, mods[i].path) == 0)
            mods[k - 1].rss += mods[i].rss;
        else
            mods[k++] = mods[i];
    }
    qsort(mods, k, sizeof(*mods), cmp_rss);
    m->nmodules = 0;
    for (size_t i = 0; i < k; i++)
        if (mods[i].rss)
            m->nmodules++;
    for (size_t i = 0; i < k && m->ntop < CLI_MEM_TOP_MODULES && mods[i].rss; i++) {
        snprintf(m->top[m->ntop].path, sizeof(m->top[0].path), "%s", mods[i].path);
        m->top[m->ntop++].rss = mods[i].rss;
    }
    return 0;
}

static bool names_other_allocator(const struct cli_smaps *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *p = s->v[i].path;
        if (p && p[0] == '/' && (strstr(cli_paths_basename(p), "jemalloc") || strstr(cli_paths_basename(p), "tcmalloc") ||
                                 strstr(cli_paths_basename(p), "mimalloc")))
            return true;
    }
    return false;
}

int cli_memory_split(const struct cli_smaps *s, const struct hi_alloc_stats *alloc, cli_mem_reader read,
                     cli_mem_resident resident, void *ctx, const uint64_t *sps, size_t nsps,
                     struct cli_memory *m)
{
    memset(m, 0, sizeof(*m));
    bool have = alloc && alloc->status == 0;
    if (alloc) {
        m->have_alloc = true;
        m->alloc = *alloc;
    }
    /* glibc's own mappings are looked for when glibc is the allocator, or
     * when nothing says otherwise (not attached: no figures). */
    bool glibc = alloc ? alloc->allocator == HI_ALLOC_GLIBC : !names_other_allocator(s);
    struct mod_rss *mods = calloc(s->n ? s->n : 1, sizeof(*mods));
    if (!mods)
        return -ENOMEM;
    size_t nmods = 0;
    uint64_t pool = 0, r_ar = 0, r_mm = 0, mm_bytes = 0;

    for (size_t i = 0; i < s->n; i++) {
        const struct cli_smaps_vma *v = &s->v[i];
        const struct cli_smaps_vma *prev = i ? &s->v[i - 1] : NULL;
        enum vma_class c = by_name(v);
        uint64_t mm_rss = 0, bss_rss = 0;
        const char *module = NULL;

        if (alloc && alloc->module_base >= v->start && alloc->module_base < v->end && v->path)
            snprintf(m->alloc_module, sizeof(m->alloc_module), "%s", v->path);
        if (v->path && v->path[0] == '/')
            runtimes(v->path, m);
        if (c == VC_FILE)
            module = v->path;
        if (c == VC_ANON && !is_anon(v) && glibc) {
            c = VC_GHEAP; /* [heap]: glibc's main arena */
        } else if (c == VC_ANON && v->rss) {
            bool first = false;
            if (contains_sp(v, sps, nsps)) {
                c = VC_STACK;
            } else if (glibc && glibc_arena_heap(s, i, read, ctx, &first)) {
                c = VC_GHEAP;
                m->glibc_arenas += first;
            } else if (glibc && (mm_bytes = glibc_mmapped_chunks(v, v->start, read, ctx)) > 0) {
                c = VC_GMMAP;
                /* The VMA may also hold something else after the blocks
                 * (a merged neighbour): only the blocks' pages count. */
                mm_rss = resident_part(v, v->start, v->start + mm_bytes, resident, ctx);
            } else if (prev && prev->end == v->start && is_anon(prev) && strcmp(prev->perms, "---p") == 0 &&
                       strcmp(v->perms, "rw-p") == 0 && !v->path && v->end - v->start >= (16u << 10) &&
                       pthread_stack(v, read, ctx) != 0) {
                c = VC_STACK; /* a thread stack above its guard page (PTHREAD_STACK_MIN is 16 KiB) */
            } else if (prev && prev->end == v->start && by_name(prev) == VC_FILE && !v->path &&
                       strcmp(v->perms, "rw-p") == 0) {
                /* The .bss that follows a module's data, as far as the
                 * module's program headers say. The kernel merges it with
                 * an anonymous neighbour above: a module loaded below
                 * glibc's mmapped blocks (ours, dlopened into a process
                 * that already holds them) makes one VMA that no longer
                 * starts with a chunk header, so the blocks are looked for
                 * where the .bss ends. */
                uint64_t bss_end = module_bss_end(s, i - 1, read, ctx);
                if (bss_end > v->start) {
                    uint64_t in_end = (bss_end + 4095) & ~(uint64_t)4095;

                    if (in_end > v->end)
                        in_end = v->end;
                    bss_rss = resident_part(v, v->start, in_end, resident, ctx);
                    module = prev->path;
                    if (glibc && (mm_bytes = glibc_mmapped_chunks(v, in_end, read, ctx)) > 0) {
                        mm_rss = resident_part(v, in_end, in_end + mm_bytes, resident, ctx);
                        if (mm_rss > v->rss - bss_rss)
                            mm_rss = v->rss - bss_rss;
                    }
                }
            }
        }
        switch (c) {
        case VC_FILE:
            m->parts[CLI_MEM_FILES] += v->rss;
            mods[nmods++] = (struct mod_rss){ module, v->rss };
            break;
        case VC_OTHER: m->parts[CLI_MEM_OTHER] += v->rss; break;
        case VC_STACK: m->parts[CLI_MEM_STACKS] += v->rss; break;
        case VC_GHEAP: r_ar += v->rss; break;
        case VC_GMMAP:
            r_mm += mm_rss;
            pool += v->rss - mm_rss;
            break;
        case VC_ANON:
            if (bss_rss) {
                m->parts[CLI_MEM_FILES] += bss_rss;
                mods[nmods++] = (struct mod_rss){ module, bss_rss };
            }
            r_mm += mm_rss;
            pool += v->rss - bss_rss - mm_rss;
            if (v->dontfork)
                m->mmap_dontfork += v->rss - bss_rss - mm_rss;
            break;
        }
        m->rss += v->rss;
    }
    if (glibc)
        m->glibc_arenas++; /* main_arena: [heap], or mmapped when brk failed */
    m->heap_smaps_rss = r_ar + r_mm;
    m->heap_mmapped_rss = r_mm;
    m->anon_rss = pool + r_ar + r_mm;

    if (glibc && have && (alloc->fields & HI_AF_IN_USE)) {
        uint64_t u_ar = alloc->in_use > alloc->mmapped ? alloc->in_use - alloc->mmapped : 0;
        uint64_t in_ar = u_ar < r_ar ? u_ar : r_ar;
        m->parts[CLI_MEM_HEAP_IN_USE] = r_mm + in_ar;
        m->parts[CLI_MEM_HEAP_FREE] = r_ar - in_ar;
        m->untouched = (alloc->mmapped > r_mm ? alloc->mmapped - r_mm : 0) + (u_ar - in_ar);
        m->parts[CLI_MEM_MMAP] = pool;
    } else if (glibc) {
        /* Found by its shape, not split: nobody told us what is in use. */
        m->parts[CLI_MEM_HEAP_UNSPLIT] = r_ar + r_mm;
        m->parts[CLI_MEM_MMAP] = pool;
    } else if (have && (alloc->fields & (HI_AF_RESIDENT | HI_AF_MAPPED))) {
        /* The allocator's own resident figure, out of the anonymous pool. */
        uint64_t r = (alloc->fields & HI_AF_RESIDENT) ? alloc->resident : alloc->mapped;
        uint64_t h = r < pool ? r : pool;
        if (alloc->fields & HI_AF_IN_USE) {
            uint64_t u = alloc->in_use < h ? alloc->in_use : h;
            m->parts[CLI_MEM_HEAP_IN_USE] = u;
            m->parts[CLI_MEM_HEAP_FREE] = h - u;
            m->untouched = alloc->in_use - u;
        } else {
            m->parts[CLI_MEM_HEAP_UNSPLIT] = h;
        }
        m->parts[CLI_MEM_MMAP] = pool - h;
        if (r > pool)
            cli_memory_note(m, "%s counts %.1f MiB resident, more than the %.1f MiB of anonymous memory smaps "
                               "shows: its figure counts pages it never touched; the breakdown uses smaps'",
                            cli_memory_allocator_name(alloc->allocator), (double)r / 1048576.0,
                            (double)pool / 1048576.0);
    } else {
        m->parts[CLI_MEM_UNPLACED] = pool + r_ar + r_mm;
    }
    top_modules(mods, nmods, m);
    free(mods);
    m->valid = true;
    return 0;
}

struct mem_fd {
    int fd;
    int pagemap;                 /* /proc/PID/pagemap, or -1 */
    const struct cli_smaps *s;   /* to tell private anonymous memory */
};

/* Whether [addr, addr+len) lies in private anonymous memory whose pages
 * were never written: neither present nor swapped out in the target's
 * pagemap. Such memory reads as zeros, and reading it through
 * /proc/PID/mem would map the zero page into the target, one page-table
 * entry a page (the census's copy met this on a 64 GiB sparse mapping).
 * File pages and shared memory are never judged so: what is not mapped
 * there still has contents. */
static bool untouched_anon(const struct mem_fd *f, uint64_t addr, size_t len)
{
    if (f->pagemap < 0 || !f->s || !len)
        return false;
    const struct cli_smaps_vma *v = NULL;
    for (size_t lo = 0, hi = f->s->n; lo < hi && !v;) { /* the mapping holding addr */
        size_t mid = lo + (hi - lo) / 2;
        if (addr < f->s->v[mid].start)
            hi = mid;
        else if (addr >= f->s->v[mid].end)
            lo = mid + 1;
        else
            v = &f->s->v[mid];
    }
    if (!v || v->inode || v->perms[3] != 'p' || addr + len > v->end)
        return false;
    for (uint64_t pg = addr / 4096; pg <= (addr + len - 1) / 4096; pg++) {
        uint64_t e;
        if (pread(f->pagemap, &e, sizeof(e), (off_t)(pg * 8)) != (ssize_t)sizeof(e) || (e >> 62))
            return false;
    }
    return true;
}

/* Pages of [lo, hi) present in memory (pagemap bit 63), as smaps' Rss
 * counts them; swapped pages are not. */
static int64_t resident_mem(void *ctx, uint64_t lo, uint64_t hi)
{
    const struct mem_fd *f = ctx;
    uint64_t e[512], n = 0;

    if (f->pagemap < 0)
        return -1;
    for (uint64_t pg = lo / 4096; pg < (hi + 4095) / 4096;) {
        uint64_t want = (hi + 4095) / 4096 - pg;
        ssize_t r;

        if (want > 512)
            want = 512;
        r = pread(f->pagemap, e, want * 8, (off_t)(pg * 8));
        if (r <= 0 || r % 8)
            return -1;
        for (ssize_t k = 0; k < r / 8; k++)
            n += e[k] >> 63;
        pg += (uint64_t)r / 8;
    }
    return (int64_t)(n * 4096);
}

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct mem_fd *f = ctx;
    if (untouched_anon(f, addr, len)) {
        memset(buf, 0, len);
        return 0;
    }
    ssize_t r = pread(f->fd, buf, len, (off_t)addr);
    return r == (ssize_t)len ? 0 : r < 0 ? -errno : -EIO;
}

/* Stack pointers of the threads that are in a syscall or stopped
 * (/proc/PID/task/TID/syscall: "nr args... sp pc"; "running" otherwise). */
static size_t thread_sps(pid_t pid, uint64_t *sps, size_t max)
{
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p2[320], buf[256];
        snprintf(p2, sizeof(p2), "/proc/%d/task/%s/syscall", (int)pid, e->d_name);
        int fd = open(p2, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        char *tok[10];
        int nt = 0;
        for (char *sv, *t = strtok_r(buf, " \n", &sv); t && nt < 10; t = strtok_r(NULL, " \n", &sv))
            tok[nt++] = t;
        if (nt >= 3)
            sps[n++] = strtoull(tok[nt - 2], NULL, 0);
    }
    closedir(d);
    return n;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cli_memory_read(pid_t pid, const struct hi_alloc_stats *alloc, struct cli_memory *m)
{
    struct cli_smaps s;
    uint64_t sps[4096];
    char path[64];
    double t0 = mono_ms();
    memset(m, 0, sizeof(*m));
    int rc = cli_smaps_read(pid, &s);
    if (rc < 0)
        return rc;
    size_t nsps = thread_sps(pid, sps, sizeof(sps) / sizeof(sps[0]));
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    struct mem_fd mf = { open(path, O_RDONLY | O_CLOEXEC), -1, &s };
    snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
    mf.pagemap = mf.fd >= 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    rc = cli_memory_split(&s, alloc, mf.fd >= 0 ? read_mem : NULL, resident_mem, &mf, sps, nsps, m);
    if (mf.fd >= 0)
        close(mf.fd);
    if (mf.pagemap >= 0)
        close(mf.pagemap);
    cli_smaps_free(&s);
    if (rc == 0) {
        snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            struct cli_exe_alloc ea;
            memset(&ea, 0, sizeof(ea));
            int own = cli_exe_alloc_scan(fd, &ea);
            if (own >= 0 && ea.go)
                m->go = true;
            if (own == 1)
                snprintf(m->exe_alloc, sizeof(m->exe_alloc), "%s (it defines %s)", ea.allocator, ea.symbol);
            close(fd);
        }
    }
    m->pid = (int)pid;
    m->read_ms = mono_ms() - t0;
    return rc;
}
