/* libc.c - the target's C library, resolved from the file the target maps.
 *
 * Addresses come from the target's own libc file (opened through
 * /proc/PID/map_files or /proc/PID/root, inj_maps_open_file) plus the load
 * base from its maps, never from the injector's libc: the target may run
 * another glibc (container, upgraded package with the old file deleted). */
#include "injector/libc.h"
#include "injector/target.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "injector/elfsym.h"
#include "injector/error.h"
#include "injector/log.h"

/* How far the allocator's code may extend past its first or last exported
 * function (static helpers like _int_malloc live there). */
#define ALLOC_SLACK (256 * 1024)

/* In strcmp order (bsearch: a libc has thousands of function symbols to
 * classify on the attach's path). glibc >= 2.34 builds morecore.c and the
 * old state functions into malloc.c too. */
static const char *const alloc_names[] = {
    "__default_morecore", "__libc_calloc", "__libc_free", "__libc_mallinfo", "__libc_malloc",
    "__libc_mallopt", "__libc_memalign", "__libc_pvalloc", "__libc_realloc", "__libc_reallocarray",
    "__libc_valloc", "aligned_alloc", "calloc", "cfree", "free", "mallinfo", "mallinfo2", "malloc",
    "malloc_get_state", "malloc_info", "malloc_set_state", "malloc_stats", "malloc_trim",
    "malloc_usable_size", "mallopt", "memalign", "posix_memalign", "pvalloc", "realloc",
    "reallocarray", "valloc",
};

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

int inj_libc_is_alloc_name(const char *name)
{
    return bsearch(name, alloc_names, sizeof(alloc_names) / sizeof(alloc_names[0]), sizeof(alloc_names[0]),
                   by_name) != NULL;
}

/* The sized function symbols of libc, collected in the one walk of its
 * tables (inj_libc_resolve), for alloc_range. */
struct func {
    uint64_t lo, hi;
    bool alloc;
};

struct funcs {
    struct func *v;
    size_t n, cap;
    bool failed;
};

static void collect_func(void *vctx, const char *name, uint64_t value, uint64_t size)
{
    struct funcs *f = vctx;

    if (!size || f->failed)
        return;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 4096;
        struct func *v = realloc(f->v, cap * sizeof(*v));
        if (!v) {
            f->failed = true;
            return;
        }
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = (struct func){ value, value + size, inj_libc_is_alloc_name(name) != 0 };
}

/* glibc builds the allocator as one object (malloc/malloc.c includes
 * arena.c, hooks.c, ...), so its static functions (_int_malloc, _int_free,
 * sysmalloc, malloc_consolidate, arena_get2, tcache_init) sit next to the
 * exported ones, and distribution libc files carry no .symtab to name them.
 * The code between the nearest exported non-allocator functions on either
 * side of the exported allocator functions is therefore the allocator's. */
static void alloc_range(const struct funcs *f, uint64_t *lo, uint64_t *hi)
{
    uint64_t hull_lo = UINT64_MAX, hull_hi = 0, prev_end = 0, next_start = UINT64_MAX;

    *lo = *hi = 0;
    if (f->failed)
        return;
    for (size_t i = 0; i < f->n; i++) {
        if (!f->v[i].alloc)
            continue;
        if (f->v[i].lo < hull_lo)
            hull_lo = f->v[i].lo;
        if (f->v[i].hi > hull_hi)
            hull_hi = f->v[i].hi;
    }
    if (hull_lo >= hull_hi)
        return;
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].alloc)
            continue;
        if (f->v[i].hi <= hull_lo && f->v[i].hi > prev_end)
            prev_end = f->v[i].hi;
        if (f->v[i].lo >= hull_hi && f->v[i].lo < next_start)
            next_start = f->v[i].lo;
    }
    *lo = hull_lo - prev_end <= ALLOC_SLACK ? prev_end : hull_lo - ALLOC_SLACK;
    *hi = next_start - hull_hi <= ALLOC_SLACK ? next_start : hull_hi + ALLOC_SLACK;
}

static int open_module(pid_t pid, const struct inj_maps *maps, const struct inj_map *any,
                       struct inj_elf **elf, uint64_t *bias, struct stat *st)
{
    const struct inj_map *head = inj_maps_module_head(maps, any->path);
    int fd, r;

    if (!head)
        return -ENOENT;
    fd = inj_maps_open_file(pid, head);
    if (fd < 0)
        return fd;
    if (st && fstat(fd, st) < 0)
        st->st_ino = 0; /* not kept */
    r = inj_elf_open(fd, elf);
    if (r)
        return r;
    r = inj_elf_load_bias(*elf, head->start, head->offset, bias);
    if (r) {
        inj_elf_close(*elf);
        *elf = NULL;
    }
    return r;
}

/* What one libc file says, at link-time addresses (found: non-zero), kept
 * by the file's identity (device, inode, size, mtime) for the processes of
 * one command that map the same libc (a server's workers): the walk of its
 * symbol tables was ~4% of the cli's CPU attaching PostgreSQL's 14
 * processes. Only a libc that exports dlopen itself (glibc >= 2.34) is
 * kept: before, the answer also depends on the process's libdl. */
struct libc_file {
    struct stat st;
    uint64_t dlopen, dlsym, dlerror, mmap, munmap, sigaction, alloc_lo, alloc_hi;
};
#define LIBC_FILES_MAX 8
static struct libc_file libc_files[LIBC_FILES_MAX];
static int nlibc_files;
static pthread_mutex_t libc_files_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_libc_file(const struct stat *x, const struct stat *y)
{
    return x->st_dev == y->st_dev && x->st_ino == y->st_ino && x->st_size == y->st_size &&
           x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

/* out's addresses from a kept file, with this process's bias. */
static void from_file(const struct libc_file *f, struct inj_libc *out)
{
    out->dlopen = out->bias + f->dlopen;
    snprintf(out->dlopen_name, sizeof(out->dlopen_name), "dlopen");
    out->dlsym = f->dlsym ? out->bias + f->dlsym : 0;
    out->dlerror = f->dlerror ? out->bias + f->dlerror : 0;
    out->mmap = f->mmap ? out->bias + f->mmap : 0;
    out->munmap = f->munmap ? out->bias + f->munmap : 0;
    out->sigaction = f->sigaction ? out->bias + f->sigaction : 0;
    out->alloc_lo = f->alloc_hi ? out->bias + f->alloc_lo : 0;
    out->alloc_hi = f->alloc_hi ? out->bias + f->alloc_hi : 0;
}

/* Keeps out's answers (libc's own dlopen) for the file st; lock held. */
static void keep_file(const struct stat *st, const struct inj_libc *out)
{
    if (nlibc_files >= LIBC_FILES_MAX || !st->st_ino)
        return;
    struct libc_file *f = &libc_files[nlibc_files++];
    f->st = *st;
    f->dlopen = out->dlopen - out->bias;
    f->dlsym = out->dlsym ? out->dlsym - out->bias : 0;
    f->dlerror = out->dlerror ? out->dlerror - out->bias : 0;
    f->mmap = out->mmap ? out->mmap - out->bias : 0;
    f->munmap = out->munmap ? out->munmap - out->bias : 0;
    f->sigaction = out->sigaction ? out->sigaction - out->bias : 0;
    f->alloc_lo = out->alloc_hi ? out->alloc_lo - out->bias : 0;
    f->alloc_hi = out->alloc_hi ? out->alloc_hi - out->bias : 0;
}

static bool is_libdl(const char *path)
{
    const char *b = strrchr(path, '/');

    return !strncmp(b ? b + 1 : path, "libdl", 5);
}

int inj_libc_resolve(pid_t pid, const struct inj_maps *maps, struct inj_libc *out, char *err,
                     size_t errlen)
{
    const struct inj_map *m = inj_maps_find_module(maps, inj_maps_is_libc);
    struct inj_elf *elf = NULL, *dl = NULL;
    uint64_t v, dlbias = 0;
    int r;

    memset(out, 0, sizeof(*out));
    if (!m)
        return inj_err(err, errlen, INJ_ESTATIC,
                       "pid %d has no glibc libc.so mapped (statically linked, or another "
                       "C library): nothing to call dlopen in", pid);
    snprintf(out->path, sizeof(out->path), "%s", m->path);
    struct stat st;
    r = open_module(pid, maps, m, &elf, &out->bias, &st);
    if (r) {
        char shown[512];
        inj_target_printable(shown, sizeof(shown), m->path);
        return inj_err(err, errlen, INJ_EINTERNAL, "reading pid %d's libc %s: %s", pid, shown,
                       strerror(-r));
    }
    /* Held while the first asker walks the file: the command's attaches
     * start together. */
    pthread_mutex_lock(&libc_files_lock);
    for (int i = 0; st.st_ino && i < nlibc_files; i++)
        if (same_libc_file(&libc_files[i].st, &st)) {
            from_file(&libc_files[i], out);
            pthread_mutex_unlock(&libc_files_lock);
            inj_elf_close(elf);
            return INJ_OK;
        }

    /* Everything needed of libc in one walk of its symbol tables. */
    enum { W_DLOPEN, W_DLSYM, W_DLERROR, W_DLOPEN_MODE, W_LIBC_DLSYM, W_MMAP, W_MUNMAP, W_SIGACTION, W_N };
    struct inj_elf_want w[W_N] = {
        [W_DLOPEN] = { .name = "dlopen" }, [W_DLSYM] = { .name = "dlsym" },
        [W_DLERROR] = { .name = "dlerror" }, [W_DLOPEN_MODE] = { .name = "__libc_dlopen_mode" },
        [W_LIBC_DLSYM] = { .name = "__libc_dlsym" }, [W_MMAP] = { .name = "mmap" },
        [W_MUNMAP] = { .name = "munmap" }, [W_SIGACTION] = { .name = "sigaction" },
    };
    struct funcs funcs = { 0 };

    inj_elf_lookup(elf, w, W_N, collect_func, &funcs);

    /* glibc >= 2.34 exports dlopen from libc.so.6. Before, it lives in
     * libdl.so.2 (if the target loaded it); libc itself then only has the
     * internal __libc_dlopen_mode, which needs __RTLD_DLOPEN and has no
     * dlerror. */
    bool own_dlopen = inj_elf_want_result(&w[W_DLOPEN], &v, NULL) == 0;
    if (own_dlopen) {
        out->dlopen = out->bias + v;
        snprintf(out->dlopen_name, sizeof(out->dlopen_name), "dlopen");
        if (inj_elf_want_result(&w[W_DLSYM], &v, NULL) == 0)
            out->dlsym = out->bias + v;
        if (inj_elf_want_result(&w[W_DLERROR], &v, NULL) == 0)
            out->dlerror = out->bias + v;
    } else {
        const struct inj_map *dm = inj_maps_find_module(maps, is_libdl);

        if (dm && open_module(pid, maps, dm, &dl, &dlbias, NULL) == 0 &&
            inj_elf_symbol(dl, "dlopen", &v, NULL) == 0) {
            out->dlopen = dlbias + v;
            snprintf(out->dlopen_name, sizeof(out->dlopen_name), "dlopen");
            if (inj_elf_symbol(dl, "dlsym", &v, NULL) == 0)
                out->dlsym = dlbias + v;
            if (inj_elf_symbol(dl, "dlerror", &v, NULL) == 0)
                out->dlerror = dlbias + v;
        } else if (inj_elf_want_result(&w[W_DLOPEN_MODE], &v, NULL) == 0) {
            out->dlopen = out->bias + v;
            out->dlopen_flags = INJ_RTLD_DLOPEN;
            snprintf(out->dlopen_name, sizeof(out->dlopen_name), "__libc_dlopen_mode");
            if (inj_elf_want_result(&w[W_LIBC_DLSYM], &v, NULL) == 0)
                out->dlsym = out->bias + v;
        }
    }
    if (inj_elf_want_result(&w[W_MMAP], &v, NULL) == 0)
        out->mmap = out->bias + v;
    if (inj_elf_want_result(&w[W_MUNMAP], &v, NULL) == 0)
        out->munmap = out->bias + v;
    if (inj_elf_want_result(&w[W_SIGACTION], &v, NULL) == 0)
        out->sigaction = out->bias + v;
    alloc_range(&funcs, &out->alloc_lo, &out->alloc_hi);
    free(funcs.v);
    if (out->alloc_hi) {
        out->alloc_lo += out->bias;
        out->alloc_hi += out->bias;
    }
    if (own_dlopen && out->dlsym)
        keep_file(&st, out);
    pthread_mutex_unlock(&libc_files_lock);
    inj_elf_close(dl);
    inj_elf_close(elf);
    if (!out->dlopen || !out->dlsym)
        return inj_err(err, errlen, INJ_EINTERNAL,
                       "pid %d's libc %s exports neither dlopen/dlsym nor "
                       "__libc_dlopen_mode/__libc_dlsym", pid, out->path);
    return INJ_OK;
}
