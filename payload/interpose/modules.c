/* modules.c - collect / resolve / apply GOT patching and restore. */
#include "payload/interpose/modules.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/seccomp_gate.h"
#include "payload/sys/sys.h"
#include "payload/interpose/family.h"
#include "payload/interpose/got.h"
#include "payload/record/record.h"

#define PL_MAX_CANDS 2048u
#define PL_MAX_NEW 256u
#define PL_MAX_SKIP_NAMES 8u
#define PL_SKIP_NAME_LEN 64u

/* A patched (or once patched) slot. */
struct pl_slot {
    uintptr_t addr;
    uintptr_t orig;   /* exact value before patching: restored on stop */
    uintptr_t hook;
    uint16_t func;
    uint8_t family;
    uint8_t patched;  /* holds `hook` as far as we know */
    uint8_t prot;     /* PROT_* of its page when patched: what a restore
                         puts back, with no /proc read (got.h) */
    uint32_t module;  /* index in pl_mods */
};

/* A module we have looked at in this session. */
struct pl_modrec {
    uintptr_t base;
    const void *phdr;
    uint64_t name_hash;
    uint32_t first_slot, nslots;
    uint8_t gone;     /* no longer loaded (or replaced): slots forgotten */
    uint8_t seen;     /* scratch for one scan */
    char name[48];    /* tail of dlpi_name, for the test interface */
};

/* A slot found in phase 1, waiting for phases 2 and 3. */
struct pl_cand {
    uintptr_t addr, value, target;
    uint16_t func;
    uint8_t lazy;
    int8_t family;   /* -1: do not patch */
    uint32_t newmod;
};

struct pl_newmod {
    uintptr_t base;
    const void *phdr;
    uint64_t name_hash;
    uint32_t first_cand, ncand;
    char name[48];
};

/* Everything below: pl_patch_lock. */
static pthread_mutex_t pl_patch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_slot pl_slots[PL_MAX_SLOTS];
static uint32_t pl_nslots;
static struct pl_modrec pl_mods[PL_MAX_MODULES];
static uint32_t pl_nmods;
static struct pl_cand pl_cands[PL_MAX_CANDS];
static uint32_t pl_ncands;
static struct pl_newmod pl_new[PL_MAX_NEW];
static uint32_t pl_nnew;
static unsigned long long pl_last_adds, pl_last_subs;
static int pl_deferred;
static unsigned pl_relro_waits; /* passes in a row that left a module relocating */

/* Modules never patched (pl_modules_init, then read-only). */
static uintptr_t pl_skip_base[8];
static unsigned pl_nskip_base;
static char pl_skip_names[PL_MAX_SKIP_NAMES][PL_SKIP_NAME_LEN];
static unsigned pl_nskip_names;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static const char *base_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; p && *p; p++)
        if (*p == '/')
            b = p + 1;
    return b ? b : "";
}

static void copy_tail(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    const char *s = n >= len ? src + n - (len - 1) : src;
    size_t m = n >= len ? len - 1 : n;
    if (m)
        memcpy(dst, s, m);
    dst[m] = '\0';
}

/* ---- skip set ------------------------------------------------------- */

/* Libraries every process has: they stay patchable even when the payload
 * needs them too. */
static int is_system_lib(const char *name)
{
    static const char *const sys[] = { "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                                       "ld-linux-x86-64.so.2", "libgcc_s.so.1", "librt.so.1" };
    for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
        if (strcmp(name, sys[i]) == 0)
            return 1;
    return 0;
}

static void add_skip_name(const char *name)
{
    if (is_system_lib(name) || pl_nskip_names >= PL_MAX_SKIP_NAMES || strlen(name) >= PL_SKIP_NAME_LEN)
        return;
    for (unsigned i = 0; i < pl_nskip_names; i++)
        if (strcmp(pl_skip_names[i], name) == 0)
            return;
    strcpy(pl_skip_names[pl_nskip_names++], name);
}

struct skip_arg {
    uintptr_t inside;
};

static int skip_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct skip_arg *a = data;
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) != 0)
        return 0;
    if (a->inside < d.lo || a->inside >= d.hi)
        return 0;
    if (pl_nskip_base < 8)
        pl_skip_base[pl_nskip_base++] = info->dlpi_addr;
    add_skip_name(base_name(info->dlpi_name));
    for (unsigned i = 0; i < d.nneeded; i++)
        add_skip_name(d.needed[i]);
    return 0;
}

int pl_modules_init(void)
{
    static int done;
    if (done)
        return 0;
    struct skip_arg a = { (uintptr_t)&pl_modules_init };
    dl_iterate_phdr(skip_cb, &a);
    if (pl_nskip_base == 0)
        return -ENOENT;
    done = 1;
    return 0;
}

static int skip_module(const struct dl_phdr_info *info)
{
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_addr == getauxval(AT_SYSINFO_EHDR) || strncmp(name, "linux-vdso", 10) == 0 ||
        strncmp(name, "linux-gate", 10) == 0)
        return 1;
    if (info->dlpi_addr && info->dlpi_addr == getauxval(AT_BASE))
        return 1; /* the dynamic linker */
    for (unsigned i = 0; i < pl_nskip_base; i++)
        if (info->dlpi_addr == pl_skip_base[i])
            return 1;
    const char *bn = base_name(name);
    if (strncmp(bn, "ld-linux", 8) == 0)
        return 1;
    for (unsigned i = 0; i < pl_nskip_names; i++)
        if (strcmp(bn, pl_skip_names[i]) == 0)
            return 1;
    return 0;
}

/* ---- records -------------------------------------------------------- */

static struct pl_modrec *find_rec(uintptr_t base, const void *phdr, uint64_t nh)
{
    for (uint32_t i = 0; i < pl_nmods; i++) {
        struct pl_modrec *m = &pl_mods[i];
        if (!m->gone && m->base == base && m->phdr == phdr && m->name_hash == nh)
            return m;
    }
    return NULL;
}

static void forget_rec(struct pl_modrec *m)
{
    m->gone = 1;
    for (uint32_t s = m->first_slot; s < m->first_slot + m->nslots; s++)
        pl_slots[s].patched = 0;
}

/* Our patch is still in place: a module dlclose'd and another loaded at
 * the same place between two scans would hold fresh values instead. */
static int rec_intact(const struct pl_modrec *m)
{
    for (uint32_t s = m->first_slot; s < m->first_slot + m->nslots; s++)
        if (pl_slots[s].patched)
            return pl_got_read(pl_slots[s].addr) == pl_slots[s].hook;
    return 1;
}

void pl_modules_reset(void)
{
    pthread_mutex_lock(&pl_patch_lock);
    pl_nslots = 0;
    pl_nmods = 0;
    pl_last_adds = pl_last_subs = 0;
    pl_deferred = 0;
    pl_relro_waits = 0;
    pthread_mutex_unlock(&pl_patch_lock);
}

/* ---- phase 1: collect ----------------------------------------------- */

struct collect_arg {
    unsigned long long adds, subs;
    int first;
    int deferred;
};

static void collect_relocs(const struct pl_dyn *d, const ElfW(Rela) *rel, size_t bytes, uint32_t newmod,
                           int *deferred)
{
    size_t n = bytes / sizeof(ElfW(Rela));
    int defines_malloc = -1;
    for (size_t i = 0; i < n && !*deferred; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        size_t symi = ELF64_R_SYM(rel[i].r_info);
        const char *name = symi ? pl_dyn_sym_name(d, symi) : NULL;
        if (!name)
            continue;
        int func = pl_func_by_name(name);
        if (func < 0)
            continue;
        /* A module that defines malloc is an allocator: its own maps are
         * its heap, counted as malloc'ed blocks (hooks_mmap.c). */
        if (pl_func_is_map((unsigned)func)) {
            if (defines_malloc < 0)
                defines_malloc = pl_dyn_lookup(d, "malloc") != 0;
            if (defines_malloc)
                continue;
        }
        uintptr_t addr = d->base + rel[i].r_offset;
        if (addr < d->lo || addr + sizeof(uintptr_t) > d->hi || (addr & 7))
            continue;
        uintptr_t v = pl_got_read(addr);
        if (pl_stack_in_payload(v))
            continue; /* already ours (an earlier session left it?) */
        if (d->base && v < d->hi - d->base) {
            /* a link-time value: this module is still being relocated */
            *deferred = 1;
            return;
        }
        const ElfW(Sym) *sym = &d->symtab[symi];
        int defined_here = sym->st_shndx != SHN_UNDEF && sym->st_value && v == d->base + sym->st_value;
        if (pl_ncands >= PL_MAX_CANDS) {
            *deferred = 1; /* this module goes whole into the next scan */
            return;
        }
        struct pl_cand *c = &pl_cands[pl_ncands++];
        c->addr = addr;
        c->value = v;
        c->target = 0;
        c->func = (uint16_t)func;
        c->lazy = v >= d->lo && v < d->hi && !defined_here;
        c->family = -1;
        c->newmod = newmod;
    }
}

static int collect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct collect_arg *a = data;
    if (a->first) {
        a->adds = info->dlpi_adds;
        a->subs = info->dlpi_subs;
        a->first = 0;
    }
    if (skip_module(info))
        return 0;
    uint64_t nh = name_hash(info->dlpi_name);
    struct pl_modrec *m = find_rec(info->dlpi_addr, info->dlpi_phdr, nh);
    if (m) {
        m->seen = 1;
        if (rec_intact(m))
            return 0;
        forget_rec(m);
    }
    if (pl_nnew >= PL_MAX_NEW) {
        a->deferred = 1;
        return 0;
    }
    struct pl_dyn d;
    uint32_t first = pl_ncands;
    int deferred = 0;
    if (pl_dyn_parse(info, &d) == 0) {
        if (d.rela)
            collect_relocs(&d, d.rela, d.relasz, pl_nnew, &deferred);
        if (d.jmprel && !deferred)
            collect_relocs(&d, d.jmprel, d.pltrelsz, pl_nnew, &deferred);
    }
    if (deferred) {
        pl_ncands = first;
        a->deferred = 1;
        return 0;
    }
    struct pl_newmod *nm = &pl_new[pl_nnew++];
    nm->base = info->dlpi_addr;
    nm->phdr = info->dlpi_phdr;
    nm->name_hash = nh;
    nm->first_cand = first;
    nm->ncand = pl_ncands - first;
    copy_tail(nm->name, sizeof(nm->name), info->dlpi_name);
    return 0;
}

/* ---- phase 2: resolve ----------------------------------------------- */

/* The object that holds target (dladdr's dli_fbase), 0 when none. dladdr
 * also looks for the nearest symbol, a walk of the object's whole symbol
 * table (libc: ~3,000), for every candidate slot; most slots point to the
 * same few functions, so a pass asks once per target. */
#define PL_BASE_MEMO 64u
struct base_memo {
    uintptr_t target[PL_BASE_MEMO], base[PL_BASE_MEMO];
    uint32_t n;
};

static uintptr_t object_base(struct base_memo *m, uintptr_t target)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->target[i] == target)
            return m->base[i];
    Dl_info di;
    uintptr_t base = dladdr((void *)target, &di) && di.dli_fbase ? (uintptr_t)di.dli_fbase : 0;
    if (m->n < PL_BASE_MEMO) {
        m->target[m->n] = target;
        m->base[m->n++] = base;
    }
    return base;
}

static void resolve_cands(void)
{
    struct base_memo memo;
    memo.n = 0;
    for (uint32_t i = 0; i < pl_ncands; i++) {
        struct pl_cand *c = &pl_cands[i];
        uintptr_t target = c->value;
        if (c->lazy) {
            /* Never call through the PLT stub: it would run the lazy
             * resolver, which rewrites this very slot. */
            target = (uintptr_t)dlsym(RTLD_DEFAULT, pl_func_name(c->func));
        }
        if (!target || pl_stack_in_payload(target))
            continue;
        uintptr_t base = object_base(&memo, target);
        if (!base)
            continue;
        int f = pl_family_get(base);
        if (f < 0 || pl_family_bind(f, c->func, (void *)target) != 0)
            continue;
        c->target = target;
        c->family = (int8_t)f;
    }
}

/* ---- phase 3: apply ------------------------------------------------- */

/* The protection of every page that holds a slot to patch, from one read
 * of /proc/self/maps per pass (before: one read per module, ~50 in
 * PostgreSQL, 0.2-1 ms each, all inside the injection's held call). Pages
 * ascending, no duplicates; prot -1: in no mapping. */
static uintptr_t pl_prot_page[PL_MAX_CANDS];
static signed char pl_prot_val[PL_MAX_CANDS];
static uint32_t pl_nprot;
static int pl_prot_read; /* 0: read; else -errno (each slot then asks got.c) */

static void gather_prot_pages(void)
{
    pl_nprot = 0;
    for (uint32_t i = 0; i < pl_ncands; i++) {
        if (pl_cands[i].family < 0)
            continue;
        uintptr_t page = pl_cands[i].addr & ~(uintptr_t)4095;
        /* insertion in order; candidates come module by module, mostly
         * ascending, so the walk back is short */
        uint32_t j = pl_nprot;
        while (j > 0 && pl_prot_page[j - 1] > page)
            j--;
        if (j > 0 && pl_prot_page[j - 1] == page)
            continue;
        memmove(&pl_prot_page[j + 1], &pl_prot_page[j], (pl_nprot - j) * sizeof(pl_prot_page[0]));
        pl_prot_page[j] = page;
        pl_nprot++;
    }
    pl_prot_read = pl_maps_prot_pages(pl_prot_page, pl_nprot, pl_prot_val);
}

/* A slot's page protection: from the pass's read of the maps; 0 or
 * -ENOENT (in no mapping). When that read failed, got.c's own lookup
 * (the maps again, else the module's program headers). */
static int slot_prot(const struct dl_phdr_info *info, uintptr_t addr, int *prot)
{
    if (pl_prot_read)
        return pl_got_prot(info, addr, prot);
    uintptr_t page = addr & ~(uintptr_t)4095;
    uint32_t lo = 0, hi = pl_nprot;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pl_prot_page[mid] < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= pl_nprot || pl_prot_page[lo] != page)
        return pl_got_prot(info, addr, prot); /* not gathered: cannot happen, asked directly */
    if (pl_prot_val[lo] < 0)
        return -ENOENT;
    *prot = pl_prot_val[lo];
    return 0;
}

struct apply_arg {
    int patched;
    int gathered; /* the protections were read, inside this iteration */
    int deferred; /* a module still being relocated: the next pass */
};

/* Is the slot at addr on a page the loader will make read-only once the
 * module is relocated (PT_GNU_RELRO, rounded as glibc's
 * _dl_protect_relro: the range's last partial page stays writable)? */
static int in_relro(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)4095;
        return addr >= lo && addr < hi;
    }
    return 0;
}

/* A module whose relocated slots sit on a RELRO page that is still
 * writable is linked but not done: the loader writes that page on and
 * then makes it read-only. Patched now, our store could meet its
 * mprotect (a fault), and what a restore would put back is the
 * protection of a moment. The next pass takes it. A page that stays
 * writable (a program, or another hooker, that made its GOT writable
 * for good) would have every pass of the agent (each 50 ms) parse the
 * module's relocations again: after PL_RELRO_WAITS passes in a row that
 * waited, the module is patched as its page is. */
#define PL_RELRO_WAITS 40u

static int relocating(const struct dl_phdr_info *info, const struct pl_newmod *nm)
{
    if (pl_relro_waits >= PL_RELRO_WAITS)
        return 0;
    for (uint32_t i = nm->first_cand; i < nm->first_cand + nm->ncand; i++) {
        int prot;
        if (pl_cands[i].family >= 0 && in_relro(info, pl_cands[i].addr) &&
            slot_prot(info, pl_cands[i].addr, &prot) == 0 && (prot & PROT_WRITE))
            return 1;
    }
    return 0;
}

static int apply_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct apply_arg *a = data;
    /* The pages' protections are read here, with the loader's list held
     * by this iteration, not before it: a module dlclosed and another
     * mapped at its address meanwhile (same base, headers and name: one
     * module to find_rec and to this match) had its span read-only for
     * a moment while the loader mapped it, and that protection, put back
     * on the new module's .got.plt page by pl_got_write, made its .data
     * and .bss read-only: pl_storm's libz died in its own destructor's
     * store (e2e payload_storm, one run in ~40 in CI, every few cycles of
     * attach under a dlopen/dlclose loop). Within the iteration no linked
     * module is unmapped or replaced. */
    if (!a->gathered) {
        gather_prot_pages();
        a->gathered = 1;
    }
    uint64_t nh = name_hash(info->dlpi_name);
    for (uint32_t n = 0; n < pl_nnew; n++) {
        struct pl_newmod *nm = &pl_new[n];
        if (nm->base != info->dlpi_addr || nm->phdr != info->dlpi_phdr || nm->name_hash != nh)
            continue;
        if (pl_nmods >= PL_MAX_MODULES)
            return 1;
        if (relocating(info, nm)) {
            a->deferred = 1;
            continue;
        }
        struct pl_modrec *m = &pl_mods[pl_nmods];
        memset(m, 0, sizeof(*m));
        m->base = nm->base;
        m->phdr = nm->phdr;
        m->name_hash = nh;
        m->first_slot = pl_nslots;
        memcpy(m->name, nm->name, sizeof(m->name));
        for (uint32_t i = nm->first_cand; i < nm->first_cand + nm->ncand; i++) {
            struct pl_cand *c = &pl_cands[i];
            if (c->family < 0 || pl_nslots >= PL_MAX_SLOTS)
                continue;
            uintptr_t orig = pl_got_read(c->addr);
            /* A lazy slot may have been bound since phase 1: then the bound
             * value is what we restore. Any other change: leave the slot. */
            if (orig != c->value && !(c->lazy && orig == c->target))
                continue;
            uintptr_t hook = pl_hook_addr(c->family, c->func);
            if (!hook)
                continue; /* no hook for it on this architecture */
            int lost, prot;
            if (slot_prot(info, c->addr, &prot) != 0)
                continue;
            int err = pl_got_write(c->addr, hook, prot, &lost);
            if (err && !lost)
                continue;
            struct pl_slot *s = &pl_slots[pl_nslots++];
            s->addr = c->addr;
            s->orig = orig;
            s->hook = hook;
            s->func = c->func;
            s->family = (uint8_t)c->family;
            s->patched = 1;
            s->prot = (uint8_t)prot;
            s->module = pl_nmods;
            a->patched++;
        }
        m->nslots = pl_nslots - m->first_slot;
        pl_nmods++;
        nm->base = 0; /* applied */
        nm->phdr = NULL;
    }
    return 0;
}

static int patch_new_locked(void)
{
    for (uint32_t i = 0; i < pl_nmods; i++)
        pl_mods[i].seen = 0;
    pl_ncands = 0;
    pl_nnew = 0;
    struct collect_arg ca = { 0, 0, 1, 0 };
    dl_iterate_phdr(collect_cb, &ca);
    for (uint32_t i = 0; i < pl_nmods; i++)
        if (!pl_mods[i].gone && !pl_mods[i].seen)
            forget_rec(&pl_mods[i]); /* unloaded */
    pl_last_adds = ca.adds;
    pl_last_subs = ca.subs;
    pl_deferred = ca.deferred;

    struct apply_arg aa = { 0, 0, 0 };
    if (pl_nnew) {
        resolve_cands();
        dl_iterate_phdr(apply_cb, &aa);
        if (aa.deferred)
            pl_deferred = 1;
        pl_relro_waits = aa.deferred ? pl_relro_waits + 1 : 0;
    }
    return aa.patched;
}

int pl_modules_patch_new(void)
{
    pthread_mutex_lock(&pl_patch_lock);
    int n = patch_new_locked();
    pthread_mutex_unlock(&pl_patch_lock);
    return n;
}

static int counts_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    unsigned long long *v = data;
    v[0] = info->dlpi_adds;
    v[1] = info->dlpi_subs;
    return 1;
}

void pl_modules_loader_counts(unsigned long long v[2])
{
    v[0] = v[1] = 0;
    dl_iterate_phdr(counts_cb, v);
}

int pl_modules_changed(void)
{
    unsigned long long v[2];
    pl_modules_loader_counts(v);
    pthread_mutex_lock(&pl_patch_lock);
    int changed = v[0] != pl_last_adds || v[1] != pl_last_subs || pl_deferred;
    pthread_mutex_unlock(&pl_patch_lock);
    return changed;
}

int pl_modules_patch_new_from_caller(void)
{
    unsigned long long v[2];
    pl_modules_loader_counts(v);
    if (pthread_mutex_trylock(&pl_patch_lock) != 0)
        return 0; /* the agent is at it, or a restore */
    int n = 0;
    if ((v[0] != pl_last_adds || v[1] != pl_last_subs) && pl_key_load() != PL_KEY_OFF)
        n = patch_new_locked();
    pthread_mutex_unlock(&pl_patch_lock);
    return n;
}

/* ---- restore -------------------------------------------------------- */

struct restore_arg {
    int failed;
};

static int restore_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct restore_arg *a = data;
    uint64_t nh = name_hash(info->dlpi_name);
    struct pl_modrec *m = find_rec(info->dlpi_addr, info->dlpi_phdr, nh);
    if (!m)
        return 0;
    m->seen = 1;
    for (uint32_t i = m->first_slot; i < m->first_slot + m->nslots; i++) {
        struct pl_slot *s = &pl_slots[i];
        if (!s->patched)
            continue;
        if (pl_got_read(s->addr) != s->hook) {
            s->patched = 0; /* someone else rewrote it: leave theirs */
            continue;
        }
        int lost;
        int err = pl_got_write(s->addr, s->orig, s->prot, &lost);
        if (err && !lost) {
            a->failed++; /* stays a plain forward: the hooks are off */
            continue;
        }
        s->patched = 0;
    }
    return 0;
}

int pl_modules_restore_all(void)
{
    pthread_mutex_lock(&pl_patch_lock);
    for (uint32_t i = 0; i < pl_nmods; i++)
        pl_mods[i].seen = 0;
    struct restore_arg ra = { 0 };
    dl_iterate_phdr(restore_cb, &ra);
    for (uint32_t i = 0; i < pl_nmods; i++)
        if (!pl_mods[i].gone && !pl_mods[i].seen)
            forget_rec(&pl_mods[i]);
    pthread_mutex_unlock(&pl_patch_lock);
    return ra.failed;
}

void pl_modules_describe_slots(struct hi_seccomp_gate *g)
{
    g->slots = (uint64_t)(uintptr_t)pl_slots;
    g->nslots_addr = (uint64_t)(uintptr_t)&pl_nslots;
    g->slot_stride = (uint32_t)sizeof(struct pl_slot);
    g->off_addr = (uint32_t)offsetof(struct pl_slot, addr);
    g->off_orig = (uint32_t)offsetof(struct pl_slot, orig);
    g->off_hook = (uint32_t)offsetof(struct pl_slot, hook);
    g->off_patched = (uint32_t)offsetof(struct pl_slot, patched);
}

uint32_t pl_modules_slots_patched(void)
{
    uint32_t n = 0;
    pthread_mutex_lock(&pl_patch_lock);
    for (uint32_t i = 0; i < pl_nslots; i++)
        n += pl_slots[i].patched;
    pthread_mutex_unlock(&pl_patch_lock);
    return n;
}

uint32_t pl_modules_malloc_slots_patched(void)
{
    uint32_t n = 0;
    pthread_mutex_lock(&pl_patch_lock);
    for (uint32_t i = 0; i < pl_nslots; i++)
        n += pl_slots[i].patched && pl_slots[i].func < PL_F_MALLOC_COUNT;
    pthread_mutex_unlock(&pl_patch_lock);
    return n;
}

uint32_t pl_modules_modules_patched(void)
{
    uint32_t n = 0;
    pthread_mutex_lock(&pl_patch_lock);
    for (uint32_t i = 0; i < pl_nmods; i++) {
        const struct pl_modrec *m = &pl_mods[i];
        if (m->gone)
            continue;
        for (uint32_t s = m->first_slot; s < m->first_slot + m->nslots; s++)
            if (pl_slots[s].patched) {
                n++;
                break;
            }
    }
    pthread_mutex_unlock(&pl_patch_lock);
    return n;
}

/* ---- test interface ------------------------------------------------- */

struct describe_arg {
    struct pl_buf *b;
};

static int describe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct describe_arg *a = data;
    struct pl_modrec *m = find_rec(info->dlpi_addr, info->dlpi_phdr, name_hash(info->dlpi_name));
    if (!m)
        return 0;
    for (uint32_t i = m->first_slot; i < m->first_slot + m->nslots; i++) {
        const struct pl_slot *s = &pl_slots[i];
        pl_buf_str(a->b, "slot ");
        pl_buf_hex(a->b, s->addr);
        pl_buf_str(a->b, " ");
        pl_buf_str(a->b, pl_func_name(s->func));
        pl_buf_str(a->b, " fam=");
        pl_buf_u64(a->b, s->family);
        pl_buf_str(a->b, " orig=");
        pl_buf_hex(a->b, s->orig);
        pl_buf_str(a->b, " cur=");
        pl_buf_hex(a->b, pl_got_read(s->addr));
        pl_buf_str(a->b, " hook=");
        pl_buf_hex(a->b, s->hook);
        pl_buf_str(a->b, " patched=");
        pl_buf_u64(a->b, s->patched);
        pl_buf_str(a->b, " module=");
        pl_buf_str(a->b, m->name[0] ? m->name : "(main)");
        pl_buf_str(a->b, "\n");
    }
    return 0;
}

size_t pl_modules_describe(char *buf, size_t len)
{
    struct pl_buf b;
    pl_buf_init(&b, buf, len);
    pthread_mutex_lock(&pl_patch_lock);
    struct describe_arg a = { &b };
    dl_iterate_phdr(describe_cb, &a);
    pthread_mutex_unlock(&pl_patch_lock);
    return b.pos;
}

/* Restores the patched slots i..end-1, all on one page of one
 * protection, in a fork child (pl_modules_atfork_child's rules: a slot
 * that no longer holds our hook is left alone). */
static void restore_page_slots(uint32_t i, uint32_t end)
{
    uintptr_t first = pl_slots[i].addr;
    int prot = pl_slots[i].prot, mine = 0;
    if (!pl_mem_readable(first) || !(prot & PROT_READ))
        return; /* the page is gone or was never readable: left alone */
    for (uint32_t k = i; k < end; k++)
        mine += pl_slots[k].patched && pl_got_read(pl_slots[k].addr) == pl_slots[k].hook;
    if (!mine)
        return;
    long pgsz = sysconf(_SC_PAGESIZE);
    void *page = (void *)(first & ~((uintptr_t)pgsz - 1));
    if (!(prot & PROT_WRITE) && mprotect(page, (size_t)pgsz, prot | PROT_WRITE) != 0)
        return;
    for (uint32_t k = i; k < end; k++) {
        struct pl_slot *s = &pl_slots[k];
        if (!s->patched || (s->addr & 7) || pl_got_read(s->addr) != s->hook)
            continue;
        __atomic_store_n((uintptr_t *)s->addr, s->orig, __ATOMIC_RELEASE);
        s->patched = 0;
    }
    if (!(prot & PROT_WRITE))
        mprotect(page, (size_t)pgsz, prot); /* failed: written anyway, as pl_got_write's prot_lost */
}

PL_FORK_TEXT void pl_modules_atfork_child(int keep_slots)
{
    /* Rewritten only when not as fresh (held by a parent thread): a write
     * copies the page into every child. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    if (memcmp(&pl_patch_lock, &fresh, sizeof(fresh)) != 0)
        memcpy(&pl_patch_lock, &fresh, sizeof(fresh));
    /* Followed (its own session starts now): the slots stay ours. */
    if (keep_slots)
        return;
    /* A child forked during a session (a server's worker, a reload)
     * would keep our hooks, plain forwards there, for good: the parent's
     * detach does not reach it. Its slots go back now, while it is the
     * only thread. No dl_iterate_phdr (the loader's lock may have been
     * held by a parent thread at the fork) and no lock: a slot whose
     * address the kernel says is unreadable, or that no longer holds our
     * hook (a module closed or patched by someone else meanwhile), is
     * left alone. */
    /* A module's slots are neighbours (they were recorded in its order):
     * one readability check and one pair of mprotect calls per page, not
     * per slot. That was ~420 system calls in every child of an attached
     * PostgreSQL postmaster (138 slots), a quarter of what a new
     * connection cost (bench/service.py, pgbench -C). */
    uint32_t n = pl_nslots < PL_MAX_SLOTS ? pl_nslots : PL_MAX_SLOTS;
    /* The page size asked of libc only once a slot is ours: detached,
     * none is, and sysconf's text is one page more the child would fault
     * in (fork_text.h). */
    uintptr_t pgmask = 0;
    for (uint32_t i = 0; i < n;) {
        struct pl_slot *s = &pl_slots[i];
        if (!s->patched) {
            i++;
            continue;
        }
        if (!pgmask)
            pgmask = ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
        uintptr_t page = s->addr & pgmask;
        uint32_t end = i + 1;
        while (end < n && (pl_slots[end].addr & pgmask) == page && pl_slots[end].prot == s->prot)
            end++;
        restore_page_slots(i, end);
        i = end;
    }
}
