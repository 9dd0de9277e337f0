/* allocstats.c - the allocator's own figures (ALLOC_STATS) and trim. */
#include "payload/interpose/allocstats.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "payload/sys/sys.h"
#include "payload/interpose/family.h"
#include "payload/record/record.h"

/* glibc >= 2.33 (malloc.h); declared here so that the payload builds and
 * runs against an older libc, where mallinfo is used instead. */
struct pl_mallinfo2 {
    size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
struct pl_mallinfo {
    int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

/* The functions one allocator module exports that we use; NULL if absent. */
struct pl_alloc_api {
    enum hi_allocator kind;
    uintptr_t base;
    struct pl_mallinfo2 (*mallinfo2)(void);
    struct pl_mallinfo (*mallinfo)(void);
    int (*malloc_trim)(size_t);
    int (*mallctl)(const char *, void *, size_t *, void *, size_t);
    int (*tc_get)(const char *, size_t *);
    void (*tc_release)(void);
    void (*mi_process_info)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *);
    void (*mi_collect)(_Bool);
};

struct find_arg {
    uintptr_t base;          /* module wanted; 0: the first that defines malloc */
    struct pl_alloc_api *api;
    int found;
};

static void fill_api(const struct pl_dyn *d, struct pl_alloc_api *a)
{
    a->mallctl = (void *)pl_dyn_lookup(d, "mallctl");
    a->tc_get = (void *)pl_dyn_lookup(d, "MallocExtension_GetNumericProperty");
    a->tc_release = (void *)pl_dyn_lookup(d, "MallocExtension_ReleaseFreeMemory");
    a->mi_process_info = (void *)pl_dyn_lookup(d, "mi_process_info");
    a->mi_collect = (void *)pl_dyn_lookup(d, "mi_collect");
    a->malloc_trim = (void *)pl_dyn_lookup(d, "malloc_trim");
    a->mallinfo2 = (void *)pl_dyn_lookup(d, "mallinfo2");
    a->mallinfo = (void *)pl_dyn_lookup(d, "mallinfo");
    /* Order matters: jemalloc and tcmalloc also export mallinfo and
     * malloc_trim-like names; glibc is the module that defines
     * gnu_get_libc_version (as in family.c). */
    if (a->mallctl)
        a->kind = HI_ALLOC_JEMALLOC;
    else if (a->tc_get)
        a->kind = HI_ALLOC_TCMALLOC;
    else if (a->mi_process_info)
        a->kind = HI_ALLOC_MIMALLOC;
    else if (pl_dyn_lookup(d, "gnu_get_libc_version"))
        a->kind = HI_ALLOC_GLIBC;
    else
        a->kind = HI_ALLOC_UNKNOWN;
}

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_arg *f = data;
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) != 0)
        return 0;
    if (f->base && (f->base < d.lo || f->base >= d.hi))
        return 0;
    /* A family's module may only hold the canonical PLT entry of malloc
     * (a non-PIE executable that takes malloc's address, like python3:
     * every slot then points at its PLT stub): not a definition. */
    if (!pl_dyn_lookup(&d, "malloc"))
        return f->base ? 1 : 0;
    f->api->base = f->base ? f->base : d.lo;
    fill_api(&d, f->api);
    f->found = 1;
    return 1;
}

/* The allocator the program's malloc calls reach. Families whose malloc is
 * not glibc's win: with a preloaded allocator, glibc's family exists only
 * for slots bound before the preload or by DEEPBIND. */
static int find_api(struct pl_alloc_api *api)
{
    uintptr_t base = 0;
    for (int i = 0; i < PL_MAX_FAMILIES; i++) {
        const struct pl_family *f = &pl_families[i];
        if (!f->module_base || !__atomic_load_n(&f->orig[PL_F_MALLOC], __ATOMIC_ACQUIRE))
            continue;
        if (!base || !f->glibc)
            base = f->module_base;
        if (!f->glibc)
            break;
    }
    struct find_arg a = { base, api, 0 };
    memset(api, 0, sizeof(*api));
    /* Called outside the callback: the allocator's own locks are never
     * taken while the loader's lock is held. */
    dl_iterate_phdr(find_cb, &a);
    if (!a.found && base) {
        a.base = 0; /* the first module in load order that defines malloc */
        dl_iterate_phdr(find_cb, &a);
    }
    return a.found ? 0 : -ENOENT;
}

static void set_why(char *dst, size_t len, const char *why)
{
    size_t n = strlen(why);
    memset(dst, 0, len);
    memcpy(dst, why, n < len - 1 ? n : len - 1);
}

static void read_glibc(const struct pl_alloc_api *a, struct hi_alloc_stats *s)
{
    if (a->mallinfo2) {
        struct pl_mallinfo2 m = a->mallinfo2();
        s->in_use = m.uordblks + m.hblkhd;
        s->free = m.fordblks;
        s->releasable = m.keepcost;
        s->mmapped = m.hblkhd;
        s->mapped = m.arena + m.hblkhd;
    } else if (a->mallinfo) {
        /* glibc < 2.33: int fields, which wrap past 2 GiB; the cli's
         * smaps figures stay right, these may not. */
        struct pl_mallinfo m = a->mallinfo();
        s->in_use = (uint64_t)(unsigned)m.uordblks + (unsigned)m.hblkhd;
        s->free = (unsigned)m.fordblks;
        s->releasable = (unsigned)m.keepcost;
        s->mmapped = (unsigned)m.hblkhd;
        s->mapped = (uint64_t)(unsigned)m.arena + (unsigned)m.hblkhd;
    } else {
        s->status = -ENOTSUP;
        set_why(s->why, sizeof(s->why), "glibc exports neither mallinfo2 nor mallinfo");
        return;
    }
    s->fields = HI_AF_IN_USE | HI_AF_FREE | HI_AF_RELEASABLE | HI_AF_MMAPPED | HI_AF_MAPPED;
}

static int je_size(const struct pl_alloc_api *a, const char *name, uint64_t *out)
{
    size_t v = 0, len = sizeof(v);
    if (a->mallctl(name, &v, &len, NULL, 0) != 0)
        return -1;
    *out = v;
    return 0;
}

static void read_jemalloc(const struct pl_alloc_api *a, struct hi_alloc_stats *s)
{
    /* Statistics are a cached copy refreshed by writing "epoch". */
    uint64_t epoch = 1;
    size_t elen = sizeof(epoch);
    if (a->mallctl("epoch", &epoch, &elen, &epoch, sizeof(epoch)) != 0 ||
        je_size(a, "stats.allocated", &s->in_use) != 0) {
        s->status = -ENOTSUP;
        set_why(s->why, sizeof(s->why), "jemalloc has no statistics (built with --disable-stats?)");
        return;
    }
    s->fields = HI_AF_IN_USE;
    if (je_size(a, "stats.active", &s->active) == 0)
        s->fields |= HI_AF_ACTIVE;
    if (je_size(a, "stats.resident", &s->resident) == 0)
        s->fields |= HI_AF_RESIDENT;
    if (je_size(a, "stats.retained", &s->retained) == 0)
        s->fields |= HI_AF_RETAINED;
    if (je_size(a, "stats.metadata", &s->metadata) == 0)
        s->fields |= HI_AF_METADATA;
    if (je_size(a, "stats.mapped", &s->mapped) == 0)
        s->fields |= HI_AF_MAPPED;
    /* Free inside pages jemalloc has handed to size classes (active) plus
     * dirty pages it keeps for reuse: what it maps minus what is in use. */
    if ((s->fields & HI_AF_MAPPED) && s->mapped >= s->in_use) {
        s->free = s->mapped - s->in_use;
        s->fields |= HI_AF_FREE;
    }
    unsigned n = 0;
    size_t nlen = sizeof(n);
    if (a->mallctl("arenas.narenas", &n, &nlen, NULL, 0) == 0) {
        s->arenas = n;
        s->fields |= HI_AF_ARENAS;
    }
}

static int tc_prop(const struct pl_alloc_api *a, const char *name, uint64_t *out)
{
    size_t v = 0;
    if (!a->tc_get(name, &v))
        return -1;
    *out = v;
    return 0;
}

static void read_tcmalloc(const struct pl_alloc_api *a, struct hi_alloc_stats *s)
{
    uint64_t pfree = 0, thr = 0, cen = 0, xfer = 0, phys = 0;
    if (tc_prop(a, "generic.current_allocated_bytes", &s->in_use) != 0) {
        s->status = -ENOTSUP;
        set_why(s->why, sizeof(s->why), "tcmalloc did not answer generic.current_allocated_bytes");
        return;
    }
    s->fields = HI_AF_IN_USE;
    if (tc_prop(a, "generic.heap_size", &s->mapped) == 0)
        s->fields |= HI_AF_MAPPED;
    if (tc_prop(a, "tcmalloc.pageheap_unmapped_bytes", &s->unmapped) == 0)
        s->fields |= HI_AF_UNMAPPED;
    /* total_physical_bytes = heap_size - unmapped + metadata: what
     * tcmalloc believes is backed by memory (pages it never touched count). */
    if (tc_prop(a, "generic.total_physical_bytes", &phys) == 0) {
        s->resident = phys;
        s->fields |= HI_AF_RESIDENT;
    }
    if (tc_prop(a, "tcmalloc.pageheap_free_bytes", &pfree) == 0) {
        tc_prop(a, "tcmalloc.thread_cache_free_bytes", &thr);
        tc_prop(a, "tcmalloc.central_cache_free_bytes", &cen);
        tc_prop(a, "tcmalloc.transfer_cache_free_bytes", &xfer);
        s->caches = thr + cen + xfer;
        s->free = pfree + s->caches;
        s->fields |= HI_AF_FREE | HI_AF_CACHES;
    }
    if (s->resident && s->mapped && s->unmapped <= s->mapped && s->resident > s->mapped - s->unmapped) {
        s->metadata = s->resident - (s->mapped - s->unmapped);
        s->fields |= HI_AF_METADATA;
    }
}

static void read_mimalloc(const struct pl_alloc_api *a, struct hi_alloc_stats *s)
{
    /* mimalloc keeps no process-wide "in use" total outside its
     * statistics build; mi_process_info gives what it has committed. */
    size_t el = 0, us = 0, sy = 0, rss = 0, prss = 0, commit = 0, pcommit = 0, pf = 0;
    a->mi_process_info(&el, &us, &sy, &rss, &prss, &commit, &pcommit, &pf);
    s->mapped = commit;
    s->fields = HI_AF_MAPPED;
}

void pl_allocstats_read(struct hi_alloc_stats *s)
{
    struct pl_alloc_api a;
    uint64_t t0 = pl_now_ns();
    memset(s, 0, sizeof(*s));
    if (find_api(&a) != 0) {
        s->status = -ENOENT;
        set_why(s->why, sizeof(s->why), "no module of the process defines malloc");
        return;
    }
    s->allocator = a.kind;
    s->module_base = a.base;
    switch (a.kind) {
    case HI_ALLOC_GLIBC: read_glibc(&a, s); break;
    case HI_ALLOC_JEMALLOC: read_jemalloc(&a, s); break;
    case HI_ALLOC_TCMALLOC: read_tcmalloc(&a, s); break;
    case HI_ALLOC_MIMALLOC: read_mimalloc(&a, s); break;
    default:
        s->status = -ENOTSUP;
        set_why(s->why, sizeof(s->why), "the allocator is none heapinject can read (not glibc, jemalloc, tcmalloc, mimalloc)");
        break;
    }
    s->read_ns = pl_now_ns() - t0;
}

/* jemalloc's figures read by a thread of the process (see allocstats.h):
 * the agent fills handoff_api and sets PL_HANDOFF_WANTED; the first thread
 * whose hook sees it takes it (WANTED -> READING), reads, and sets DONE. */
enum { PL_HANDOFF_IDLE, PL_HANDOFF_WANTED, PL_HANDOFF_READING, PL_HANDOFF_DONE };
int pl_allocstats_handoff;
static struct pl_alloc_api handoff_api;
static struct hi_alloc_stats handoff_st;

#define HANDOFF_WAIT_MS 1000 /* for a thread to call malloc or free (idle redis: within ~1 s) */
#define HANDOFF_READ_WAIT_MS 2000 /* for the thread that took it to finish mallctl */

void pl_allocstats_serve(void)
{
    int want = PL_HANDOFF_WANTED;
    if (!__atomic_compare_exchange_n(&pl_allocstats_handoff, &want, PL_HANDOFF_READING, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return;
    int saved_errno = errno;
    read_jemalloc(&handoff_api, &handoff_st);
    errno = saved_errno;
    __atomic_store_n(&pl_allocstats_handoff, PL_HANDOFF_DONE, __ATOMIC_RELEASE);
}

static int wait_state(int state, unsigned ms)
{
    for (unsigned i = 0; i < ms; i++) {
        if (__atomic_load_n(&pl_allocstats_handoff, __ATOMIC_ACQUIRE) == state)
            return 0;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    return __atomic_load_n(&pl_allocstats_handoff, __ATOMIC_ACQUIRE) == state ? 0 : -1;
}

/* Agent thread: jemalloc's figures from the next thread of the process
 * that calls malloc or free through a hooked slot. 0; -1 when none did
 * in time or the hooks are off: then the caller reads them itself; -2 when
 * the thread that took it has not finished (it may hold jemalloc's ctl
 * mutex for good): s says so, and jemalloc is not called here. */
static int read_jemalloc_handed_off(const struct pl_alloc_api *a, struct hi_alloc_stats *s)
{
    if (__atomic_load_n(&pl_allocstats_handoff, __ATOMIC_ACQUIRE) == PL_HANDOFF_READING)
        goto stuck;
    if (pl_key_load() == PL_KEY_OFF || pl_seccomp_sealed())
        return -1;
    handoff_api = *a;
    memset(&handoff_st, 0, sizeof(handoff_st));
    __atomic_store_n(&pl_allocstats_handoff, PL_HANDOFF_WANTED, __ATOMIC_RELEASE);
    /* A new rate generation at the same rate: every thread's next hooked
     * call takes the slow path once (and redraws its countdown, as
     * SET_RATE does), where it serves the hand-off. */
    pl_session_set_rate(__atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED));
    if (wait_state(PL_HANDOFF_DONE, HANDOFF_WAIT_MS) != 0) {
        int want = PL_HANDOFF_WANTED;
        if (__atomic_compare_exchange_n(&pl_allocstats_handoff, &want, PL_HANDOFF_IDLE, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return -1; /* withdrawn: no thread took it */
        /* taken: a thread is inside mallctl */
        if (wait_state(PL_HANDOFF_DONE, HANDOFF_READ_WAIT_MS) != 0)
            goto stuck; /* it stores DONE when it is done; READING until then */
    }
    *s = handoff_st;
    __atomic_store_n(&pl_allocstats_handoff, PL_HANDOFF_IDLE, __ATOMIC_RELEASE);
    return 0;
stuck:
    s->status = -ETIMEDOUT;
    set_why(s->why, sizeof(s->why), "the thread of the process reading jemalloc's figures has not finished "
                                    "after 2 s; they are not read again until it has");
    return -2;
}

void pl_allocstats_read_live(struct hi_alloc_stats *s)
{
    struct pl_alloc_api a;
    if (find_api(&a) != 0 || a.kind != HI_ALLOC_JEMALLOC) {
        pl_allocstats_read(s);
        return;
    }
    uint64_t t0 = pl_now_ns();
    memset(s, 0, sizeof(*s));
    s->allocator = a.kind;
    s->module_base = a.base;
    /* An idle process (no thread calls malloc or free in 1 s): read
     * here, on the agent thread, as before the hand-off. jemalloc may give
     * this thread an arena (and that arena a background thread); once the
     * agent thread has exited its arena has no thread and the next
     * session's agent is given it, so a process gets at most one such
     * arena from heapinject. */
    if (read_jemalloc_handed_off(&a, s) == -1)
        read_jemalloc(&a, s);
    s->allocator = a.kind;
    s->module_base = a.base;
    s->read_ns = pl_now_ns() - t0;
}

void pl_allocstats_trim(struct hi_trim_done *t)
{
    struct pl_alloc_api a;
    memset(t, 0, sizeof(*t));
    if (find_api(&a) != 0) {
        t->status = -ENOENT;
        set_why(t->why, sizeof(t->why), "no module of the process defines malloc");
        return;
    }
    t->allocator = a.kind;
    uint64_t t0 = pl_now_ns();
    if (a.kind == HI_ALLOC_GLIBC && a.malloc_trim) {
        set_why(t->how, sizeof(t->how), "malloc_trim(0)");
        a.malloc_trim(0);
    } else if (a.kind == HI_ALLOC_JEMALLOC) {
        /* 4096 is MALLCTL_ARENAS_ALL: every arena. */
        set_why(t->how, sizeof(t->how), "mallctl(\"arena.4096.purge\")");
        if (a.mallctl("arena.4096.purge", NULL, NULL, NULL, 0) != 0) {
            t->status = -ENOTSUP;
            set_why(t->why, sizeof(t->why), "jemalloc refused arena.4096.purge");
        }
    } else if (a.kind == HI_ALLOC_TCMALLOC && a.tc_release) {
        set_why(t->how, sizeof(t->how), "MallocExtension_ReleaseFreeMemory()");
        a.tc_release();
    } else if (a.kind == HI_ALLOC_MIMALLOC && a.mi_collect) {
        set_why(t->how, sizeof(t->how), "mi_collect(true)");
        a.mi_collect(1);
    } else {
        t->status = -ENOTSUP;
        set_why(t->why, sizeof(t->why), "the allocator has no call that returns free memory; nothing was done");
    }
    t->took_ns = pl_now_ns() - t0;
}
