/* libc.c - the target's C library, resolved from the file the target maps.
 *
 * Addresses come from the target's own libc file (opened through
 * /proc/PID/map_files or /proc/PID/root, inj_maps_open_file) plus the load
 * base from its maps, never from the injector's libc: the target may run
 * another glibc (container, upgraded package with the old file deleted). */
#include "injector/libc.h"
#include "injector/target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "injector/elfsym.h"
#include "injector/error.h"
#include "injector/log.h"

/* How far the allocator's code may extend past its first or last exported
 * function (static helpers like _int_malloc live there). */
#define ALLOC_SLACK (256 * 1024)

static const char *const alloc_names[] = {
    "malloc", "free", "cfree", "calloc", "realloc", "reallocarray", "memalign",
    "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "malloc_usable_size",
    "malloc_trim", "mallinfo", "mallinfo2", "mallopt", "malloc_stats", "malloc_info",
    "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
    "__libc_reallocarray", "__libc_memalign", "__libc_valloc", "__libc_pvalloc",
    "__libc_mallinfo", "__libc_mallopt",
    /* glibc >= 2.34 builds morecore.c and the old state functions into
     * malloc.c too. */
    "__default_morecore", "malloc_get_state", "malloc_set_state", NULL,
};

int inj_libc_is_alloc_name(const char *name)
{
    for (int i = 0; alloc_names[i]; i++)
        if (!strcmp(name, alloc_names[i]))
            return 1;
    return 0;
}

struct range_ctx {
    uint64_t lo, hi;           /* hull of the malloc-family exports */
    uint64_t prev_end, next_start;
    int pass;
};

static void hull_visit(void *vctx, const char *name, uint64_t value, uint64_t size)
{
    struct range_ctx *c = vctx;

    if (!size || !inj_libc_is_alloc_name(name))
        return;
    if (value < c->lo)
        c->lo = value;
    if (value + size > c->hi)
        c->hi = value + size;
}

static void neighbour_visit(void *vctx, const char *name, uint64_t value, uint64_t size)
{
    struct range_ctx *c = vctx;

    if (!size || inj_libc_is_alloc_name(name))
        return;
    if (value + size <= c->lo && value + size > c->prev_end)
        c->prev_end = value + size;
    if (value >= c->hi && value < c->next_start)
        c->next_start = value;
}

/* glibc builds the allocator as one object (malloc/malloc.c includes
 * arena.c, hooks.c, ...), so its static functions (_int_malloc, _int_free,
 * sysmalloc, malloc_consolidate, arena_get2, tcache_init) sit next to the
 * exported ones, and distribution libc files carry no .symtab to name them.
 * The code between the nearest exported non-allocator functions on either
 * side of the exported allocator functions is therefore the allocator's. */
static void alloc_range(struct inj_elf *elf, uint64_t *lo, uint64_t *hi)
{
    struct range_ctx c = { .lo = UINT64_MAX, .hi = 0, .prev_end = 0, .next_start = UINT64_MAX };

    inj_elf_foreach_func(elf, hull_visit, &c);
    if (c.lo >= c.hi) {
        *lo = *hi = 0;
        return;
    }
    inj_elf_foreach_func(elf, neighbour_visit, &c);
    *lo = c.lo - c.prev_end <= ALLOC_SLACK ? c.prev_end : c.lo - ALLOC_SLACK;
    *hi = c.next_start - c.hi <= ALLOC_SLACK ? c.next_start : c.hi + ALLOC_SLACK;
}

static int open_module(pid_t pid, const struct inj_maps *maps, const struct inj_map *any,
                       struct inj_elf **elf, uint64_t *bias)
{
    const struct inj_map *head = inj_maps_module_head(maps, any->path);
    int fd, r;

    if (!head)
        return -ENOENT;
    fd = inj_maps_open_file(pid, head);
    if (fd < 0)
        return fd;
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
    r = open_module(pid, maps, m, &elf, &out->bias);
    if (r) {
        char shown[512];
        inj_target_printable(shown, sizeof(shown), m->path);
        return inj_err(err, errlen, INJ_EINTERNAL, "reading pid %d's libc %s: %s", pid, shown,
                       strerror(-r));
    }

    /* glibc >= 2.34 exports dlopen from libc.so.6. Before, it lives in
     * libdl.so.2 (if the target loaded it); libc itself then only has the
     * internal __libc_dlopen_mode, which needs __RTLD_DLOPEN and has no
     * dlerror. */
    if (inj_elf_symbol(elf, "dlopen", &v, NULL) == 0) {
        out->dlopen = out->bias + v;
        snprintf(out->dlopen_name, sizeof(out->dlopen_name), "dlopen");
        if (inj_elf_symbol(elf, "dlsym", &v, NULL) == 0)
            out->dlsym = out->bias + v;
        if (inj_elf_symbol(elf, "dlerror", &v, NULL) == 0)
            out->dlerror = out->bias + v;
    } else {
        const struct inj_map *dm = inj_maps_find_module(maps, is_libdl);

        if (dm && open_module(pid, maps, dm, &dl, &dlbias) == 0 &&
            inj_elf_symbol(dl, "dlopen", &v, NULL) == 0) {
            out->dlopen = dlbias + v;
            snprintf(out->dlopen_name, sizeof(out->dlopen_name), "dlopen");
            if (inj_elf_symbol(dl, "dlsym", &v, NULL) == 0)
                out->dlsym = dlbias + v;
            if (inj_elf_symbol(dl, "dlerror", &v, NULL) == 0)
                out->dlerror = dlbias + v;
        } else if (inj_elf_symbol(elf, "__libc_dlopen_mode", &v, NULL) == 0) {
            out->dlopen = out->bias + v;
            out->dlopen_flags = INJ_RTLD_DLOPEN;
            snprintf(out->dlopen_name, sizeof(out->dlopen_name), "__libc_dlopen_mode");
            if (inj_elf_symbol(elf, "__libc_dlsym", &v, NULL) == 0)
                out->dlsym = out->bias + v;
        }
    }
    if (inj_elf_symbol(elf, "mmap", &v, NULL) == 0)
        out->mmap = out->bias + v;
    if (inj_elf_symbol(elf, "munmap", &v, NULL) == 0)
        out->munmap = out->bias + v;
    if (inj_elf_symbol(elf, "sigaction", &v, NULL) == 0)
        out->sigaction = out->bias + v;
    alloc_range(elf, &out->alloc_lo, &out->alloc_hi);
    if (out->alloc_hi) {
        out->alloc_lo += out->bias;
        out->alloc_hi += out->bias;
    }
    inj_elf_close(dl);
    inj_elf_close(elf);
    if (!out->dlopen || !out->dlsym)
        return inj_err(err, errlen, INJ_EINTERNAL,
                       "pid %d's libc %s exports neither dlopen/dlsym nor "
                       "__libc_dlopen_mode/__libc_dlsym", pid, out->path);
    return INJ_OK;
}
