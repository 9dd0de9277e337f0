/* walk.c - the census child's count of Python objects: pymalloc's pools,
 * then glibc's blocks (see python.h). Runs in the copy: no locks, no
 * malloc; every address is checked against the copy's maps before it is
 * read, and every pool's header and free list must add up before its
 * blocks are counted. */
#include "payload/census/python.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "payload/census/heap.h"

/* CPython 3.8-3.13, 64-bit, the default build. */
#define PY_GC_HEAD 16u          /* PyGC_Head: _gc_next, _gc_prev */
#define PY_PREHEADER 16u        /* 3.11+: managed dict (and 3.12+ weakref) words before it */
#define PY_TP_NAME 24u
#define PY_TP_BASICSIZE 32u
#define PY_TP_ITEMSIZE 40u
#define PY_TP_FLAGS 168u
#define PY_TP_DICT 264u
#define PY_TYPE_READ 272u       /* bytes of a type read */
#define PY_DICT_KEYS 32u        /* PyDictObject.ma_keys */
#define PY_DICT_VALUES 40u      /* ma_values: split tables (never a type's) */
#define TPF_MANAGED_WEAKREF (1ul << 3)
#define TPF_MANAGED_DICT (1ul << 4)
#define TPF_HEAPTYPE (1ul << 9)
#define TPF_READY (1ul << 12)
#define TPF_HAVE_GC (1ul << 14)
#define TPF_TYPE_SUBCLASS (1ul << 31)
#define POOL_OVERHEAD 48u       /* sizeof(struct pool_header), rounded to 16 */
#define MAX_REFCNT (1ull << 36) /* above: a pointer, not a count (3.12's immortal: 2^30, 3.13's: 2^32-1) */
#define TYPE_SLOTS 65536u       /* the table of types seen (power of two) */

struct type_slot {
    uintptr_t t;     /* 0: empty */
    uint32_t pre;    /* bytes before the object in its block */
    uint32_t row;    /* index into out->types */
    uint64_t basicsize;
};

struct walk {
    struct pl_census *cs;
    const struct pl_py_in *in;
    struct pl_py_out *out;
    unsigned minor;
    struct type_slot *slots;
    unsigned nslots;
};

/* [a, a + len) lies in one readable mapping of the copy that is not ours. */
/* Mappings a read faulted in (a file's mapping past its end: SIGBUS):
 * never read again; the walk starts over without them. */
#define MAX_BAD_MAPS 16u
static struct pl_census_range bad_maps[MAX_BAD_MAPS];
static unsigned n_bad_maps;

/* [a, a + len) lies in one private readable mapping of the copy that is
 * not ours nor one that faulted (CPython's types and objects are never in
 * shared memory). */
static int readable(struct pl_census *cs, uintptr_t a, uint64_t len)
{
    if (!a || a + len < a)
        return 0;
    const struct pl_cmap *m = pl_census_map_of(cs, a);
    if (!m || !m->read || !m->priv || m->kind == PL_CMAP_EXCLUDED || a + len > m->hi || pl_census_skip_end(cs, a))
        return 0;
    for (unsigned i = 0; i < n_bad_maps; i++)
        if (bad_maps[i].lo == m->lo)
            return 0;
    return 1;
}

static uint64_t word(uintptr_t a)
{
    return *(const volatile uint64_t *)a;
}

/* A NUL-terminated printable string of at most max-1 bytes at a, into buf. */
static int read_cstr(struct pl_census *cs, uintptr_t a, char *buf, size_t max)
{
    size_t i = 0;
    for (; i + 1 < max; i++) {
        if (((a + i) & 4095) == 0 || i == 0)
            if (!readable(cs, a + i, 1))
                return -1;
        char c = *(const volatile char *)(a + i);
        if (!c)
            break;
        if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
            return -1;
        buf[i] = c;
    }
    if (i == 0 || i + 1 >= max)
        return -1;
    buf[i] = '\0';
    return 0;
}

/* A compact ASCII str object's text (PyASCIIObject: length, hash, state,
 * and before 3.12 wstr; then the characters). */
static int read_str(struct walk *w, uintptr_t s, char *buf, size_t max)
{
    uint64_t data = w->minor >= 12 ? 40 : 48;
    if (!readable(w->cs, s, data) || word(s + 8) != w->in->unicode_type)
        return -1;
    uint64_t len = word(s + 16);
    uint32_t state = *(const volatile uint32_t *)(s + 32);
    int compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || !ascii || len == 0 || len >= max || !readable(w->cs, s + data, len + 1))
        return -1;
    memcpy(buf, (const void *)(s + data), len);
    buf[len] = '\0';
    for (uint64_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
            return -1;
    return 0;
}

/* A class's __module__, from its dict's entries: 0 and the name in buf. */
static int class_module(struct walk *w, uintptr_t t, char *buf, size_t max)
{
    struct pl_census *cs = w->cs;
    uintptr_t d = word(t + PY_TP_DICT);
    if (!readable(cs, d, PY_DICT_VALUES + 8) || word(d + 8) != w->in->dict_type || word(d + PY_DICT_VALUES))
        return -1;
    uintptr_t k = word(d + PY_DICT_KEYS);
    if (!readable(cs, k, 40))
        return -1;
    uint64_t nentries, esize, entries;
    if (w->minor >= 11) {
        uint8_t log2_index_bytes = *(const volatile uint8_t *)(k + 9), kind = *(const volatile uint8_t *)(k + 10);
        if (log2_index_bytes > 40)
            return -1;
        nentries = word(k + 24);
        esize = kind == 0 ? 24 : 16; /* DICT_KEYS_GENERAL: hash, key, value; else key, value */
        entries = k + 32 + (1ull << log2_index_bytes);
    } else {
        uint64_t size = word(k + 8);
        if (size == 0 || size > (1ull << 32) || (size & (size - 1)))
            return -1;
        uint64_t width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
        nentries = word(k + 32);
        esize = 24;
        entries = k + 40 + size * width;
    }
    if (nentries > 4096 || !readable(cs, entries, nentries * esize))
        return -1;
    char key[16];
    for (uint64_t i = 0; i < nentries; i++) {
        uintptr_t e = entries + i * esize, key_at = esize == 24 ? e + 8 : e;
        uintptr_t kp = word(key_at), vp = word(key_at + 8);
        if (kp && vp && read_str(w, kp, key, sizeof(key)) == 0 && !strcmp(key, "__module__"))
            return read_str(w, vp, buf, max);
    }
    return -1;
}

static struct type_slot *slot_of(struct walk *w, uintptr_t t)
{
    unsigned i = (unsigned)((t >> 4) * 0x9E3779B1u) & (TYPE_SLOTS - 1);
    while (w->slots[i].t && w->slots[i].t != t)
        i = (i + 1) & (TYPE_SLOTS - 1);
    return &w->slots[i];
}

/* The row for a type's name; the last row takes types past the table. */
static uint32_t new_row(struct walk *w, const char *name)
{
    struct hi_census_python *s = &w->out->sum;
    if (s->types >= PL_PY_MAX_TYPES) {
        s->types_dropped++;
        snprintf(w->out->types[PL_PY_MAX_TYPES - 1].name, sizeof(w->out->types[0].name), "(other types)");
        return PL_PY_MAX_TYPES - 1;
    }
    struct hi_census_pytype *r = &w->out->types[s->types];
    snprintf(r->name, sizeof(r->name), "%.*s", (int)sizeof(r->name) - 1, name); /* a longer name is cut */
    return s->types++;
}

/* t as a type (checked, named and remembered the first time): its slot,
 * or NULL when t is not a type. depth bounds the metatype chain. */
static struct type_slot *type_of(struct walk *w, uintptr_t t, int depth)
{
    if (!t || (t & 7) || depth > 4)
        return NULL;
    struct type_slot *sl = slot_of(w, t);
    if (sl->t)
        return sl;
    if (w->nslots >= TYPE_SLOTS / 2 || !readable(w->cs, t, PY_TYPE_READ))
        return NULL;
    uint64_t refcnt = word(t), flags = word(t + PY_TP_FLAGS);
    uint64_t basic = word(t + PY_TP_BASICSIZE), item = word(t + PY_TP_ITEMSIZE);
    if (refcnt == 0 || refcnt > MAX_REFCNT || !(flags & TPF_READY) || basic < 16 || basic > (1u << 24) ||
        item > (1u << 16))
        return NULL;
    uintptr_t meta = word(t + 8);
    if (meta != w->in->type_type) {
        if (meta == t)
            return NULL;
        struct type_slot *m = type_of(w, meta, depth + 1);
        if (!m || !(word(meta + PY_TP_FLAGS) & TPF_TYPE_SUBCLASS))
            return NULL;
    }
    char tp_name[96], module[64], name[sizeof(tp_name) + sizeof(module) + 1];
    if (read_cstr(w->cs, word(t + PY_TP_NAME), tp_name, sizeof(tp_name)) < 0)
        return NULL;
    if ((flags & TPF_HEAPTYPE) && class_module(w, t, module, sizeof(module)) == 0 && strcmp(module, "builtins"))
        snprintf(name, sizeof(name), "%s.%s", module, tp_name);
    else
        snprintf(name, sizeof(name), "%s", tp_name);
    sl = slot_of(w, t); /* the metatype's check may have taken this slot's place */
    sl->t = t;
    sl->basicsize = basic;
    sl->pre = (flags & TPF_HAVE_GC) ? PY_GC_HEAD : 0;
    if ((w->minor == 11 && (flags & TPF_MANAGED_DICT)) ||
        (w->minor >= 12 && (flags & (TPF_MANAGED_DICT | TPF_MANAGED_WEAKREF))))
        sl->pre += PY_PREHEADER;
    sl->row = new_row(w, name);
    w->nslots++;
    return sl;
}

/* The type of the object a block of bs bytes at b holds, or NULL: its
 * words at the offset the type itself asks for. */
static struct type_slot *object_in(struct walk *w, uintptr_t b, uint64_t bs)
{
    static const uint32_t offsets[] = { 0, PY_GC_HEAD, PY_GC_HEAD + PY_PREHEADER };
    for (unsigned i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
        uint32_t o = offsets[i];
        if (o + 16 > bs)
            break;
        uint64_t refcnt = word(b + o);
        if (refcnt == 0 || refcnt > MAX_REFCNT)
            continue;
        struct type_slot *t = type_of(w, word(b + o + 8), 0);
        if (t && t->pre == o && o + t->basicsize <= bs)
            return t;
    }
    return NULL;
}

static void count(struct walk *w, struct type_slot *t, uint64_t bytes)
{
    w->out->types[t->row].objects++;
    w->out->types[t->row].bytes += bytes;
}

/* One pool: 1 counted, 0 not a pool in use, -1 a header that claims a
 * pool but whose free list does not add up (a thread in pymalloc at the
 * fork). */
static int walk_pool(struct walk *w, uintptr_t p, uint32_t pool_size)
{
    const volatile uint32_t *h32 = (const volatile uint32_t *)p;
    uint32_t used = h32[0], szidx = h32[9], nextoffset = h32[10], maxnextoffset = h32[11];
    uintptr_t freeblock = word(p + 8);
    if (szidx >= 32)
        return 0;
    uint32_t size = (szidx + 1) * 16;
    if (maxnextoffset != pool_size - size || used == 0)
        return 0;
    if (nextoffset < POOL_OVERHEAD + size || nextoffset > pool_size || (nextoffset - POOL_OVERHEAD) % size)
        return -1;
    uint32_t carved = (nextoffset - POOL_OVERHEAD) / size, nfree = 0;
    uint8_t is_free[1024 / 8];
    memset(is_free, 0, sizeof(is_free));
    for (uintptr_t f = freeblock; f; f = word(f)) {
        if (f < p + POOL_OVERHEAD || f >= p + nextoffset || (f - p - POOL_OVERHEAD) % size)
            return -1;
        uint32_t k = (uint32_t)((f - p - POOL_OVERHEAD) / size);
        if (is_free[k / 8] & (1u << (k % 8)))
            return -1; /* a loop */
        is_free[k / 8] |= (uint8_t)(1u << (k % 8));
        nfree++;
    }
    if (used + nfree != carved)
        return -1;
    struct hi_census_python *s = &w->out->sum;
    for (uint32_t k = 0; k < carved; k++) {
        if (is_free[k / 8] & (1u << (k % 8)))
            continue;
        uintptr_t b = p + POOL_OVERHEAD + (uintptr_t)k * size;
        s->pool_used_blocks++;
        s->pool_used_bytes += size;
        struct type_slot *t = object_in(w, b, size);
        if (t) {
            count(w, t, size);
            s->pool_objects++;
            s->pool_object_bytes += size;
        }
    }
    s->pools++;
    return 1;
}

/* Every pool-aligned address of anonymous writable memory that was ever
 * written: pymalloc maps its arenas itself, anywhere, and the kernel may
 * merge them with the lines of other mappings. */
static void walk_pools(struct walk *w)
{
    struct pl_census *cs = w->cs;
    uint32_t pool_size = w->minor >= 10 ? 16384 : 4096; /* 3.10: 16 KiB pools with the radix tree */
    for (unsigned i = 0; i < cs->nmaps; i++) {
        const struct pl_cmap *m = &cs->maps[i];
        if (!m->read || !m->write || !m->anon || !m->priv || m->kind == PL_CMAP_EXCLUDED ||
            m->kind == PL_CMAP_HEAP || m->kind == PL_CMAP_STACK)
            continue;
        uintptr_t at = (m->lo + pool_size - 1) & ~(uintptr_t)(pool_size - 1), rl, rh;
        while (at + pool_size <= m->hi && pl_census_data_run(cs, at, m->hi, &rl, &rh)) {
            at = (rl + pool_size - 1) & ~(uintptr_t)(pool_size - 1);
            for (; at + pool_size <= m->hi && at < rh; at += pool_size) {
                uintptr_t ours = pl_census_skip_end(cs, at);
                if (ours) {
                    at = ((ours + pool_size - 1) & ~(uintptr_t)(pool_size - 1)) - pool_size;
                    continue;
                }
                if (walk_pool(w, at, pool_size) < 0)
                    w->out->sum.pools_skipped++;
            }
            if (at < rh)
                at = rh;
        }
    }
}

/* glibc's in-use blocks: objects larger than pymalloc's 512 bytes, and all
 * of them under PYTHONMALLOC=malloc. */
static void walk_blocks(struct walk *w)
{
    struct pl_census *cs = w->cs;
    struct hi_census_python *s = &w->out->sum;
    for (uint64_t i = 0; i < cs->nblk; i++) {
        const struct pl_blk *b = &cs->blk[i];
        if (b->flags & (PL_BLK_FREE | PL_BLK_META))
            continue;
        uint64_t bs = pl_blk_usable(b);
        if (bs < 16 || !readable(cs, b->mem, bs < 48 ? bs : 48))
            continue;
        struct type_slot *t = object_in(w, b->mem, bs);
        if (t) {
            count(w, t, bs);
            s->malloc_objects++;
            s->malloc_object_bytes += bs;
        }
    }
}

/* A fault during the walk (a page that maps says is readable but is not:
 * a private mapping of a file past the file's end gives SIGBUS) must not
 * end the census: the copy's own handler, for this walk only, notes the
 * mapping, and the walk starts over without it. */
static sigjmp_buf walk_fault_jmp;
static volatile uintptr_t walk_fault_addr;
static volatile int walk_fault_sig;

static void walk_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    walk_fault_sig = sig;
    walk_fault_addr = (uintptr_t)si->si_addr;
    siglongjmp(walk_fault_jmp, 1);
}

void pl_pycensus_child(struct pl_census *cs, const struct pl_py_in *in, struct pl_py_out *out)
{
    struct hi_census_python *s = &out->sum;
    memset(s, 0, sizeof(*s));
    s->version = in->version;
    s->version_exact = in->version_exact;
    if (in->status < 0) {
        s->status = in->status;
        snprintf(s->why, sizeof(s->why), "%s", in->why);
        return;
    }
    struct walk w = { cs, in, out, (in->version >> 16) & 0xff, NULL, 0 };
    w.slots = pl_census_map(TYPE_SLOTS * sizeof(struct type_slot));
    if (!w.slots) {
        s->status = -ENOMEM;
        snprintf(s->why, sizeof(s->why), "no memory for the table of Python types");
        return;
    }
    struct sigaction sa, old_segv, old_bus;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = walk_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
    n_bad_maps = 0;
    int faulted = sigsetjmp(walk_fault_jmp, 1);
    if (faulted) { /* from walk_fault: forget what was counted, leave that mapping out */
        const struct pl_cmap *m = pl_census_map_of(cs, walk_fault_addr);
        if (!m || n_bad_maps == MAX_BAD_MAPS) {
            sigaction(SIGSEGV, &old_segv, NULL);
            sigaction(SIGBUS, &old_bus, NULL);
            memset(s, 0, sizeof(*s));
            s->version = in->version;
            s->version_exact = in->version_exact;
            s->status = -EFAULT;
            snprintf(s->why, sizeof(s->why), "the walk of Python's objects faulted (signal %d) reading 0x%lx: "
                     "objects not counted", walk_fault_sig, (unsigned long)walk_fault_addr);
            return;
        }
        bad_maps[n_bad_maps].lo = m->lo;
        bad_maps[n_bad_maps++].hi = m->hi;
        memset(out->types, 0, sizeof(out->types[0]) * (s->types < PL_PY_MAX_TYPES ? s->types : PL_PY_MAX_TYPES));
        memset(s, 0, sizeof(*s));
        s->version = in->version;
        s->version_exact = in->version_exact;
        memset(w.slots, 0, TYPE_SLOTS * sizeof(struct type_slot));
        w.nslots = 0;
    }
    walk_pools(&w);
    walk_blocks(&w);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    /* What was left out, each part only when it happened. */
    size_t at = 0;
    if (s->pools_skipped)
        at += (size_t)snprintf(s->why, sizeof(s->why), "%u pools skipped (free list did not add up: a thread in "
                               "pymalloc at the fork)", s->pools_skipped);
    if (w.nslots >= TYPE_SLOTS / 2 && at < sizeof(s->why))
        at += (size_t)snprintf(s->why + at, sizeof(s->why) - at, "%stypes past 32,768 not counted", at ? "; " : "");
    if (n_bad_maps && at < sizeof(s->why))
        snprintf(s->why + at, sizeof(s->why) - at, "%sa mapping that faulted (a file's past its end) left out",
                 at ? "; " : "");
}
