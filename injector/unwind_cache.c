/* unwind_cache.c - the safe-point walk's view of the target, cached.
 *
 * Formats: ELF64 headers (System V gABI) and .eh_frame_hdr (Linux Standard
 * Base Core, "Exception Frames"), read from the target's memory. */
#include "injector/unwind_cache.h"

#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "injector/elfsym.h"
#include "injector/safepoint.h"

#define PAGE 4096u
#define NPAGES 32u      /* direct-mapped by page number: a walk touches a few stack pages and tables */
#define MAX_MODULES 64u
#define DW_EH_PE_datarel_sdata4 0x3b

struct page {
    uint64_t addr; /* page address; 0: empty */
    bool bad;      /* could not be read */
    uint8_t data[PAGE];
};

struct sym {
    uint64_t lo, hi;
    const char *name; /* in the module's names pool */
};

/* libunwind-ptrace's own answer for a frame no symbol of ours covers
 * (that costs a read of the maps, a mapping of the file and three
 * debug-link lookups each time), kept by file offset. */
struct name_memo {
    uint64_t rel; /* ip minus the load bias */
    int rc;       /* 0 or -UNW_ENOINFO */
    uint64_t off;
    char name[120];
};
#define MEMO_MAX 64u

/* A file's function symbols at their link-time addresses, read once per
 * command and shared by every process that maps the same file (the
 * postmaster and its backends, every process's libc): reading them was
 * a third of the safe-point walk's CPU per process. Found by the file's
 * identity (device, inode, size, modification time), never freed: the
 * cli is a command, and at most SHARED_MAX files are kept. */
struct file_syms {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    struct sym *syms;
    size_t nsyms;
    char *pool;
    struct name_memo memo[MEMO_MAX];
    unsigned nmemo;
};
#define SHARED_MAX 64u
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER; /* attaches run in threads */
static pthread_mutex_t collect_lock = PTHREAD_MUTEX_INITIALIZER;
static struct file_syms *shared[SHARED_MAX];
static unsigned nshared;

struct module {
    uint64_t head;    /* start of the mapping with the ELF header */
    int table;        /* 0 not looked at, 1 di valid, -1 none */
    unw_dyn_info_t di;
    int syms_state;   /* 0 not read, 1 read, -1 none */
    struct file_syms *fs; /* shared, or owned when the store was full */
    bool owned;
    uint64_t bias;    /* load bias of this process's mapping */
};

struct inj_uwc {
    const struct inj_maps *maps;
    pid_t tid;
    struct page pages[NPAGES];
    struct module mods[MAX_MODULES];
    unsigned nmods;
};

struct inj_uwc *inj_uwc_new(const struct inj_maps *maps)
{
    struct inj_uwc *c = calloc(1, sizeof(*c));
    if (c)
        c->maps = maps;
    return c;
}

void inj_uwc_free(struct inj_uwc *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nmods; i++)
        if (c->mods[i].owned) {
            free(c->mods[i].fs->syms);
            free(c->mods[i].fs->pool);
            free(c->mods[i].fs);
        }
    free(c);
}

void inj_uwc_begin(struct inj_uwc *c, pid_t tid)
{
    c->tid = tid;
    for (unsigned i = 0; i < NPAGES; i++)
        c->pages[i].addr = 0;
}

static const struct page *page_of(struct inj_uwc *c, uint64_t addr)
{
    uint64_t pa = addr & ~(uint64_t)(PAGE - 1);
    if (pa == 0)
        return NULL;
    struct page *p = &c->pages[(pa / PAGE) % NPAGES];
    if (p->addr != pa) {
        struct iovec local = { p->data, PAGE }, remote = { (void *)(uintptr_t)pa, PAGE };
        p->addr = pa;
        p->bad = process_vm_readv(c->tid, &local, 1, &remote, 1, 0) != (ssize_t)PAGE;
    }
    return p->bad ? NULL : p;
}

/* n bytes at addr (may cross one page boundary). 0 or -1. */
static int read_bytes(struct inj_uwc *c, uint64_t addr, void *out, size_t n)
{
    uint8_t *o = out;
    while (n > 0) {
        const struct page *p = page_of(c, addr);
        if (!p)
            return -1;
        size_t in = addr - p->addr, k = PAGE - in < n ? PAGE - in : n;
        memcpy(o, p->data + in, k);
        o += k;
        addr += k;
        n -= k;
    }
    return 0;
}

int inj_uwc_read(struct inj_uwc *c, uint64_t addr, uint64_t *val)
{
    return read_bytes(c, addr, val, sizeof(*val));
}

static struct module *module_of(struct inj_uwc *c, uint64_t ip)
{
    const struct inj_map *m = inj_maps_find_addr(c->maps, ip);
    if (!m || m->path[0] != '/')
        return NULL;
    const struct inj_map *head = inj_maps_module_head(c->maps, m->path);
    if (!head)
        return NULL;
    for (unsigned i = 0; i < c->nmods; i++)
        if (c->mods[i].head == head->start)
            return &c->mods[i];
    if (c->nmods == MAX_MODULES)
        return NULL;
    struct module *mod = &c->mods[c->nmods++];
    memset(mod, 0, sizeof(*mod));
    mod->head = head->start;
    return mod;
}

/* ---- unwind tables ---- */

/* Size of an encoded .eh_frame_hdr field, 0 for encodings not handled. */
static unsigned enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x03: case 0x0b: return 4;
    case 0x00: case 0x04: case 0x0c: return 8;
    default: return 0;
    }
}

/* Locates the module's binary-search table as libunwind's own
 * dwarf_find_unwind_table does from the file, but from the headers the
 * loader mapped. 0 or -1. */
static int find_table(struct inj_uwc *c, struct module *mod)
{
    Elf64_Ehdr eh;
    if (read_bytes(c, mod->head, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
        eh.e_phnum > 64)
        return -1;
    Elf64_Phdr ph[64];
    if (read_bytes(c, mod->head + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)))
        return -1;
    uint64_t bias = 0, text_lo = UINT64_MAX, text_hi = 0;
    const Elf64_Phdr *ehp = NULL;
    bool based = eh.e_type == ET_EXEC;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !based && ph[i].p_offset < PAGE) {
            bias = mod->head - (ph[i].p_vaddr & ~(uint64_t)(PAGE - 1));
            based = true;
        }
        if (ph[i].p_type == PT_GNU_EH_FRAME)
            ehp = &ph[i];
    }
    if (!based || !ehp)
        return -1;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
            continue;
        if (bias + ph[i].p_vaddr < text_lo)
            text_lo = bias + ph[i].p_vaddr;
        if (bias + ph[i].p_vaddr + ph[i].p_memsz > text_hi)
            text_hi = bias + ph[i].p_vaddr + ph[i].p_memsz;
    }
    uint64_t hdr = bias + ehp->p_vaddr;
    uint8_t h[4];
    if (text_lo >= text_hi || read_bytes(c, hdr, h, 4) || h[0] != 1 || h[3] != DW_EH_PE_datarel_sdata4)
        return -1;
    unsigned ptr_size = enc_size(h[1]), count_size = enc_size(h[2]);
    uint64_t count = 0;
    if (!ptr_size || !count_size || read_bytes(c, hdr + 4 + ptr_size, &count, count_size) || count == 0)
        return -1;
    memset(&mod->di, 0, sizeof(mod->di));
    mod->di.start_ip = text_lo;
    mod->di.end_ip = text_hi;
    mod->di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    mod->di.u.rti.segbase = hdr;
    mod->di.u.rti.table_len = count * 8 / sizeof(unw_word_t); /* two 32-bit values an entry */
    mod->di.u.rti.table_data = hdr + 4 + ptr_size + count_size;
    return 0;
}

const void *inj_uwc_table(struct inj_uwc *c, uint64_t ip)
{
    struct module *mod = module_of(c, ip);
    if (!mod)
        return NULL;
    if (mod->table == 0)
        mod->table = find_table(c, mod) == 0 ? 1 : -1;
    if (mod->table < 0 || ip < mod->di.start_ip || ip >= mod->di.end_ip)
        return NULL;
    return &mod->di;
}

/* ---- names ---- */

struct collect {
    struct sym *v;
    size_t n, cap;
    char *pool;
    size_t used, pool_cap;
    uint64_t bias;
    bool failed;
};

static void collect_visit(void *ctx, const char *name, uint64_t value, uint64_t size)
{
    struct collect *k = ctx;
    if (k->failed || !size || !name || !name[0])
        return;
    size_t len = strlen(name) + 1;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        struct sym *v = realloc(k->v, cap * sizeof(*v));
        if (!v) {
            k->failed = true;
            return;
        }
        k->v = v;
        k->cap = cap;
    }
    if (k->used + len > k->pool_cap) {
        size_t cap = k->pool_cap ? 2 * k->pool_cap : 65536;
        while (cap < k->used + len)
            cap *= 2;
        char *p = realloc(k->pool, cap);
        if (!p) {
            k->failed = true;
            return;
        }
        k->pool = p;
        k->pool_cap = cap;
    }
    memcpy(k->pool + k->used, name, len);
    /* offsets into the pool until it stops moving */
    k->v[k->n++] = (struct sym){ k->bias + value, k->bias + value + size, (const char *)(uintptr_t)k->used };
    k->used += len;
}

static int by_lo(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts by lo, stably, as glibc's qsort (a merge sort) did: LSD radix
 * sort on lo minus the lowest lo, 11 bits a pass (a libc's 3000 symbols
 * span under 2 MiB: two passes). qsort took 1.8M of the cli's 6.3M
 * instructions of an attach (callgrind); this takes a tenth of that. */
static void sort_by_lo(struct sym *v, size_t n)
{
    enum { BITS = 11, BUCKETS = 1 << BITS };
    uint64_t min = UINT64_MAX, max = 0;
    struct sym *tmp;
    size_t *count;

    if (n < 2)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i].lo < min)
            min = v[i].lo;
        if (v[i].lo > max)
            max = v[i].lo;
    }
    tmp = malloc(n * sizeof(*tmp));
    count = malloc(BUCKETS * sizeof(*count));
    if (!tmp || !count) {
        free(tmp);
        free(count);
        qsort(v, n, sizeof(*v), by_lo);
        return;
    }
    struct sym *from = v, *to = tmp;
    for (unsigned shift = 0; shift < 64 && ((max - min) >> shift) != 0; shift += BITS) {
        size_t sum = 0;

        memset(count, 0, BUCKETS * sizeof(*count));
        for (size_t i = 0; i < n; i++)
            count[((from[i].lo - min) >> shift) & (BUCKETS - 1)]++;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t k = count[b];
            count[b] = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; i++)
            to[count[((from[i].lo - min) >> shift) & (BUCKETS - 1)]++] = from[i];
        struct sym *t = from;
        from = to;
        to = t;
    }
    if (from != v)
        memcpy(v, from, n * sizeof(*v));
    free(tmp);
    free(count);
}

static bool same_file(const struct file_syms *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
           f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static struct file_syms *shared_find(const struct stat *st)
{
    for (unsigned i = 0; i < nshared; i++)
        if (same_file(shared[i], st))
            return shared[i];
    return NULL;
}

/* The file's symbols at link-time addresses, into a new file_syms. */
static struct file_syms *collect_file(struct inj_elf *elf, const struct stat *st)
{
    struct collect k = { 0 };
    inj_elf_foreach_func(elf, collect_visit, &k);
    struct file_syms *f = k.failed || k.n == 0 ? NULL : calloc(1, sizeof(*f));
    if (!f) {
        free(k.v);
        free(k.pool);
        return NULL;
    }
    for (size_t i = 0; i < k.n; i++)
        k.v[i].name = k.pool + (uintptr_t)k.v[i].name;
    sort_by_lo(k.v, k.n);
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim;
    f->syms = k.v;
    f->nsyms = k.n;
    f->pool = k.pool;
    return f;
}

static int read_syms(struct inj_uwc *c, struct module *mod)
{
    const struct inj_map *head = inj_maps_find_addr(c->maps, mod->head);
    if (!head)
        return -1;
    int fd = inj_maps_open_file(c->tid, head); /* a regular file, opened without blocking */
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    struct inj_elf *elf;
    if (inj_elf_open(fd, &elf) != 0)
        return -1;
    if (inj_elf_load_bias(elf, head->start, head->offset, &mod->bias) != 0) {
        inj_elf_close(elf);
        return -1;
    }
    /* One reader of files at a time: the command's attaches start
     * together, and each read the same file at once before (PostgreSQL's
     * 14 processes: 14 walks of postgres's symbols), the others now wait
     * for the first and take its answer. Lock order: collect_lock, then
     * shared_lock. */
    pthread_mutex_lock(&collect_lock);
    pthread_mutex_lock(&shared_lock);
    struct file_syms *f = shared_find(&st);
    pthread_mutex_unlock(&shared_lock);
    if (f) {
        pthread_mutex_unlock(&collect_lock);
        inj_elf_close(elf);
        mod->fs = f;
        return 0;
    }
    f = collect_file(elf, &st);
    inj_elf_close(elf);
    if (!f) {
        pthread_mutex_unlock(&collect_lock);
        return -1;
    }
    pthread_mutex_lock(&shared_lock);
    bool stored = nshared < SHARED_MAX;
    if (stored)
        shared[nshared++] = f;
    pthread_mutex_unlock(&shared_lock);
    pthread_mutex_unlock(&collect_lock);
    mod->owned = !stored; /* the store is full: this walk's own */
    mod->fs = f;
    return 0;
}

/* The module of ip with its symbols read, for a memo of libunwind's
 * answer: NULL also when ip's file was replaced (libunwind opens the one
 * at its path, not the one mapped). */
static struct module *module_for_memo(struct inj_uwc *c, uint64_t ip);

/* The module of ip with its symbols read, or NULL. */
static struct module *module_with_syms(struct inj_uwc *c, uint64_t ip)
{
    struct module *mod = module_of(c, ip);
    if (!mod)
        return NULL;
    if (mod->syms_state == 0)
        mod->syms_state = read_syms(c, mod) == 0 ? 1 : -1;
    return mod->syms_state > 0 ? mod : NULL;
}

/* How far back from the last symbol starting at or below ip a containing
 * one may start (aliases and nested local symbols share addresses). */
#define OVERLAP_SCAN 32

int inj_uwc_name(struct inj_uwc *c, uint64_t ip, char *buf, size_t len, uint64_t *off)
{
    struct module *mod = module_with_syms(c, ip);
    if (!mod)
        return -1;
    const struct file_syms *f = mod->fs;
    uint64_t rel = ip - mod->bias;
    size_t lo = 0, hi = f->nsyms; /* first symbol starting above rel */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->syms[mid].lo <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct sym *best = NULL;
    for (size_t i = lo, k = 0; i > 0 && k < OVERLAP_SCAN; i--, k++) {
        const struct sym *s = &f->syms[i - 1];
        if (rel >= s->hi)
            continue;
        if (!best || inj_safepoint_unsafe_name(s->name)) {
            best = s;
            if (inj_safepoint_unsafe_name(s->name))
                break;
        }
    }
    if (!best || len == 0)
        return -1;
    size_t n = strlen(best->name);
    if (n >= len)
        n = len - 1;
    memcpy(buf, best->name, n);
    buf[n] = '\0';
    *off = rel - best->lo;
    return 0;
}

bool inj_uwc_name_known(struct inj_uwc *c, uint64_t ip, char *buf, size_t len, uint64_t *off, int *rc)
{
    struct module *mod = module_for_memo(c, ip);
    if (!mod || len == 0)
        return false;
    uint64_t rel = ip - mod->bias;
    bool known = false;
    pthread_mutex_lock(&shared_lock);
    const struct file_syms *f = mod->fs;
    for (unsigned i = 0; i < f->nmemo && !known; i++) {
        const struct name_memo *m = &f->memo[i];
        if (m->rel != rel || (m->rc == 0 && strlen(m->name) >= len))
            continue;
        known = true;
        *rc = m->rc;
        if (m->rc == 0) {
            memcpy(buf, m->name, strlen(m->name) + 1);
            *off = m->off;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    return known;
}

void inj_uwc_name_remember(struct inj_uwc *c, uint64_t ip, int rc, const char *name, uint64_t off)
{
    if (rc != 0 && rc != -UNW_ENOINFO)
        return; /* a passing failure (memory, a read): asked again next time */
    if (rc == 0 && strlen(name) >= sizeof(((struct name_memo *)0)->name))
        return;
    struct module *mod = module_for_memo(c, ip);
    if (!mod)
        return;
    pthread_mutex_lock(&shared_lock);
    struct file_syms *f = mod->fs;
    if (f->nmemo < MEMO_MAX) {
        struct name_memo *m = &f->memo[f->nmemo++];
        m->rel = ip - mod->bias;
        m->rc = rc;
        m->off = off;
        snprintf(m->name, sizeof(m->name), "%s", rc == 0 ? name : "");
    }
    pthread_mutex_unlock(&shared_lock);
}

static struct module *module_for_memo(struct inj_uwc *c, uint64_t ip)
{
    const struct inj_map *m = inj_maps_find_addr(c->maps, ip);
    if (!m || m->deleted)
        return NULL;
    return module_with_syms(c, ip);
}
