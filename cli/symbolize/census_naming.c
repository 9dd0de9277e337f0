/* naming.c - names for the census: the C++ type of a group (the vtable
 * its first word points to) and the symbol of a global root, through the
 * cli's symbolizer, as for the frames of a profile. */
#include "cli/census/census.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/maps_line.h"

#include "cli/profile/profile.h"
#include "cli/util/fmt.h"
#include "cli/process/paths.h"
#include "cli/profile/stack_locs.h"
#include "cli/symbolize/symbolize.h"
#include "cli/process/image.h"
#include "cli/process/proc.h"

#define CENSUS_STACK_SHOWN 4 /* functions of a group's top stack in its name */

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    ssize_t r = pread(*(int *)ctx, buf, len, (off_t)addr);
    return r == (ssize_t)len ? 0 : -EIO;
}

/* The file of the mapping of the maps text that contains addr (an
 * absolute path; not [heap], [stack], [anon:...] or an anonymous one):
 * true, with its path in out. */
static bool mapped_file(const char *maps, size_t len, uint64_t addr, char *out, size_t outlen)
{
    struct hi_maps_lines it = hi_maps_lines_of(maps, len);
    struct hi_maps_line l;
    while (hi_maps_lines_next_parsed(&it, &l)) {
        if (addr >= l.start && addr < l.end) {
            if (!l.path || l.path[0] != '/' || !l.inode)
                return false;
            snprintf(out, outlen, "%.*s", (int)l.pathlen, l.path);
            return true;
        }
    }
    return false;
}

/* The maps text with each module's .bss given back to it: the part of the
 * image past the file's last page is anonymous memory in the maps, right
 * after the module's last mapping, and a global there (most of a program's
 * globals are zero-initialised) would be "[anon]" with no symbol. That
 * part becomes a further mapping of the module's file (same path, inode,
 * offsets going on), as far as its headers in memory say the image goes,
 * so the symbolizer reports the module over it and finds its data symbols.
 * A new text (the caller keeps its own, as the kernel lists it); NULL when
 * out of memory. */
static char *maps_with_bss(pid_t pid, const char *text, size_t *len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    size_t cap = *len + 4096, n = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { /* nothing to give back: the text as it is */
        memcpy(out, text, *len);
        return out;
    }
    struct hi_maps_line prev = { 0 };
    uint64_t base = 0, next_offset = 0;
    bool have_prev = false;
    struct hi_maps_lines it = hi_maps_lines_of(text, *len);
    const char *p, *le;
    while (hi_maps_lines_next(&it, &p, &le)) {
        struct hi_maps_line l;
        bool parsed = hi_maps_line_parse(p, le, &l);
        uint64_t img = 0;
        if (parsed && !l.path && have_prev && prev.path && prev.path[0] == '/' && prev.end == l.start && base)
            img = cli_image_end(base, read_mem, &fd);
        if (n + (size_t)(le - p) + 2 * 4200 > cap) {
            char *nb = realloc(out, cap = 2 * cap + (size_t)(le - p) + 2 * 4200);
            if (!nb) {
                free(out);
                close(fd);
                return NULL;
            }
            out = nb;
        }
        if (img > l.start) {
            uint64_t split = img < l.end ? img : l.end;
            n += (size_t)snprintf(out + n, cap - n, "%llx-%llx %s %08llx %02x:%02x %llu %.*s\n",
                                  (unsigned long long)l.start, (unsigned long long)split, l.perms,
                                  (unsigned long long)next_offset, prev.dev_major, prev.dev_minor,
                                  (unsigned long long)prev.inode, (int)prev.pathlen, prev.path);
            if (split < l.end)
                n += (size_t)snprintf(out + n, cap - n, "%llx-%llx %s 00000000 00:00 0\n",
                                      (unsigned long long)split, (unsigned long long)l.end, l.perms);
            /* The module's mapping goes on: the next line may be its .bss
             * too only if it is the rest of this one, which it is not. */
            have_prev = false;
        } else {
            memcpy(out + n, p, (size_t)(le - p));
            n += (size_t)(le - p);
            out[n++] = '\n';
            if (parsed) {
                if (l.path && l.path[0] == '/' &&
                    (l.offset == 0 || !prev.path || prev.pathlen != l.pathlen || memcmp(prev.path, l.path, l.pathlen)))
                    base = l.offset == 0 ? l.start : 0;
                prev = l;
                next_offset = l.offset + (l.end - l.start);
                have_prev = true;
            }
        }
    }
    close(fd);
    *len = n;
    return out;
}

static int cmp_symbol(const void *x, const void *y, void *ctx)
{
    char **symbol = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int d = strcmp(symbol[a], symbol[b]);
    return d ? d : a < b ? -1 : a > b;
}

/* The payload sends a root per word of a module's data, so an array of
 * pointers (`char *g_big[10]`) came out as ten rows of one name. Words
 * under one symbol become one root: retained bytes and blocks summed,
 * named "g_big (prog), 10 pointers in it"; `via` is kept only when all
 * pointers hold their memory through objects of one type. symbol[i] is
 * the name of global root i with a symbol, else NULL; the roots, their
 * names and vias are compacted in place. 0 or -ENOMEM. */
static int merge_elements(struct cli_census *c, char **symbol)
{
    size_t n = 0, *order = calloc(c->nroots + 1, sizeof(size_t));
    bool *gone = calloc(c->nroots + 1, sizeof(bool));
    int rc = 0;
    if (!order || !gone) {
        free(order);
        free(gone);
        return -ENOMEM;
    }
    for (size_t i = 0; i < c->nroots; i++)
        if (symbol[i])
            order[n++] = i;
    qsort_r(order, n, sizeof(*order), cmp_symbol, symbol);
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        size_t first = order[a];
        struct hi_census_root *r = &c->roots[first];
        bool one_via = c->root_via && c->root_via[first];
        for (b = a + 1; b < n && !strcmp(symbol[order[b]], symbol[first]); b++) {
            size_t j = order[b];
            r->retained_bytes += c->roots[j].retained_bytes;
            r->retained_blocks += c->roots[j].retained_blocks;
            one_via = one_via && c->root_via[j] && !strcmp(c->root_via[j], c->root_via[first]);
            gone[j] = true;
        }
        if (b - a == 1 || r->kind == HI_ROOT_SHARED) /* a shared record keeps its name */
            continue;
        char buf[1024];
        if (one_via)
            snprintf(buf, sizeof(buf), "%s, %zu pointers in it -> %s objects", symbol[first], b - a, c->root_via[first]);
        else
            snprintf(buf, sizeof(buf), "%s, %zu pointers in it", symbol[first], b - a);
        free(c->root_name[first]);
        if (!(c->root_name[first] = strdup(buf)))
            rc = -ENOMEM;
        if (!one_via && c->root_via) {
            free(c->root_via[first]);
            c->root_via[first] = NULL;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < c->nroots; i++) {
        if (gone[i]) {
            free(c->root_name[i]);
            if (c->root_via)
                free(c->root_via[i]);
            continue;
        }
        c->roots[w] = c->roots[i];
        c->root_name[w] = c->root_name[i];
        if (c->root_via)
            c->root_via[w] = c->root_via[i];
        w++;
    }
    for (size_t i = w; i < c->nroots; i++) { /* freed above or moved down */
        c->root_name[i] = NULL;
        if (c->root_via)
            c->root_via[i] = NULL;
    }
    c->nroots = w;
    free(order);
    free(gone);
    return rc;
}

/* Every address to name becomes a one-frame "stack" for the symbolizer
 * (+1: it looks up pc - 1, as for a return address). */
int cli_census_name(struct cli_census *c)
{
    c->group_type = calloc(c->ngroups + 1, sizeof(char *));
    c->root_name = calloc(c->nroots + 1, sizeof(char *));
    c->group_stack = calloc(c->ngroups + 1, sizeof(char *));
    if (!c->group_type || !c->root_name || !c->group_stack)
        return -ENOMEM;
    struct cli_profile p;
    memset(&p, 0, sizeof(p));
    /* The maps as the kernel lists them name the file of a mapping root;
     * the symbolizer gets them with each module's .bss given back. */
    size_t raw_len = 0;
    char *raw = cli_proc_maps_text(c->pid, &raw_len);
    if (raw) {
        p.maps_len = raw_len;
        p.maps = maps_with_bss(c->pid, raw, &p.maps_len);
    }
    size_t n = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        n += c->groups[i].first_word != 0;
    for (size_t i = 0; i < c->nroots; i++)
        n += c->roots[i].kind == HI_ROOT_GLOBAL;
    for (size_t i = 0; i < c->ngroups; i++)
        n += c->groups[i].top_stack_nframes != 0;
    for (size_t i = 0; i < c->nroots; i++)
        n += c->roots[i].kind == HI_ROOT_GLOBAL && c->roots[i].via_first_word;
    p.stacks = calloc(n + 1, sizeof(*p.stacks));
    if (!p.stacks) {
        cli_profile_free(&p);
        free(raw);
        return -ENOMEM;
    }
    size_t k = 0;
    char **symbol = calloc(c->nroots + 1, sizeof(char *)); /* per global root with a symbol: its name */
    if (!symbol) {
        cli_profile_free(&p);
        free(raw);
        return -ENOMEM;
    }
    for (size_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].first_word) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->groups[i].first_word + 1;
                p.stacks[k].npcs = 1;
            }
            k++;
        }
    for (size_t i = 0; i < c->nroots; i++)
        if (c->roots[i].kind == HI_ROOT_GLOBAL) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->roots[i].addr + 1;
                p.stacks[k].npcs = 1;
            }
            k++;
        }
    /* The groups' top stacks since attach: return addresses, as in a
     * profile. */
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct hi_census_group *g = &c->groups[i];
        uint32_t nf = g->top_stack_nframes < HI_CENSUS_STACK_FRAMES ? g->top_stack_nframes : HI_CENSUS_STACK_FRAMES;
        if (!nf)
            continue;
        p.stacks[k].pcs = malloc(nf * sizeof(uint64_t));
        if (p.stacks[k].pcs) {
            /* A Python frame (issue 29) cannot be named here: the census
             * gets no code names. Its native frames are. */
            uint32_t kept = 0;
            for (uint32_t f = 0; f < nf; f++)
                if (hi_frame_kind(g->top_stack[f]) == HI_FRAME_NATIVE)
                    p.stacks[k].pcs[kept++] = g->top_stack[f];
            p.stacks[k].npcs = kept;
        }
        k++;
    }
    /* The C++ objects global roots hold their memory through */
    for (size_t i = 0; i < c->nroots; i++)
        if (c->roots[i].kind == HI_ROOT_GLOBAL && c->roots[i].via_first_word) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->roots[i].via_first_word + 1;
                p.stacks[k].npcs = 1;
            }
            k++;
        }
    p.nstacks = n;
    int rc = 0;
    if (p.maps && n) {
        struct cli_symbolizer *s = cli_symbolizer_new(c->pid, cli_proc_same_mntns(c->pid));
        rc = s ? cli_symbolizer_run(s, &p) : -ENOMEM;
        if (s)
            cli_symbolizer_free(s);
    }
    k = 0;
    for (size_t i = 0; i < c->ngroups && rc == 0; i++)
        if (c->groups[i].first_word) {
            const struct cli_stack *st = &p.stacks[k++];
            const char *t = st->nframes ? cli_census_vtable_type(st->frames[0].function) : NULL;
            if (t && !(c->group_type[i] = strdup(t)))
                rc = -ENOMEM;
        }
    for (size_t i = 0; i < c->nroots && rc == 0; i++) {
        const struct hi_census_root *r = &c->roots[i];
        char buf[512], file[256];
        if (r->kind == HI_ROOT_GLOBAL) {
            const struct cli_stack *st = &p.stacks[k++];
            const struct cli_frame *f = st->nframes ? &st->frames[0] : NULL;
            if (f && f->function) {
                snprintf(buf, sizeof(buf), "%s (%s)", f->function, f->module ? cli_paths_basename(f->module) : "?");
                if (!(symbol[i] = strdup(buf)))
                    rc = -ENOMEM;
            }
            else if (f && f->module && f->module[0] == '/')
                /* No symbol here (a stripped module): its address within the
                 * module, which a debug file names later ('info symbol' in
                 * gdb, addr2line -f on the debug file). */
                snprintf(buf, sizeof(buf), "global at 0x%llx (%s+0x%llx)", (unsigned long long)r->addr,
                         cli_paths_basename(f->module), (unsigned long long)(f->module_offset - 1));
            else
                snprintf(buf, sizeof(buf), "global at 0x%llx%s%s", (unsigned long long)r->addr,
                         f && f->module ? " in " : "", f && f->module ? cli_paths_basename(f->module) : "");
        } else if (r->kind == HI_ROOT_STACK) {
            snprintf(buf, sizeof(buf), "stack of thread %d (%s)", (int)r->tid, r->thread[0] ? r->thread : "?");
        } else if (r->kind == HI_ROOT_TLS) {
            snprintf(buf, sizeof(buf), "thread-local storage of thread %d (%s)", (int)r->tid,
                     r->thread[0] ? r->thread : "?");
        } else if (r->kind == HI_ROOT_REGISTER) {
            snprintf(buf, sizeof(buf), "registers of thread %d (%s)", (int)r->tid, r->thread[0] ? r->thread : "?");
        } else if (r->kind == HI_ROOT_UNCOPIED) {
            snprintf(buf, sizeof(buf), "mapping 0x%llx-0x%llx the fork does not copy (MADV_DONTFORK: a "
                                       "runtime's heap, read live)",
                     (unsigned long long)r->addr, (unsigned long long)r->end);
        } else if (r->kind == HI_ROOT_SHARED) {
            /* addr, end: the ids (index + 1) of the root that reached the
             * blocks first and of one that reached them after; the records
             * come after every root they name. */
            const char *a = r->addr && r->addr <= i && c->root_name[r->addr - 1] ? c->root_name[r->addr - 1] : NULL;
            const char *b = r->end && r->end <= i && c->root_name[r->end - 1] ? c->root_name[r->end - 1] : NULL;
            if (a && b && strcmp(a, b))
                snprintf(buf, sizeof(buf), "shared: reachable from %.200s and from %.200s (and maybe more roots)", a, b);
            else if (a)
                snprintf(buf, sizeof(buf), "shared: reachable from more than one root, among them %.300s", a);
            else
                snprintf(buf, sizeof(buf), "shared: reachable from more than one root, credited to none of them");
            if (!(symbol[i] = strdup(buf))) /* records that read the same are one (merge_elements) */
                rc = -ENOMEM;
        } else if (r->kind == HI_ROOT_KERNEL) {
            snprintf(buf, sizeof(buf), "data of the process's epoll registrations (kept by the kernel)");
        } else if (raw && mapped_file(raw, raw_len, r->addr, file, sizeof(file))) {
            char safe[256]; /* the file's name is the program's choice */
            snprintf(buf, sizeof(buf), "private writable mapping of %s 0x%llx-0x%llx (its written pages)",
                     cli_fmt_printable(cli_paths_basename(file), safe, sizeof(safe)),
                     (unsigned long long)r->addr, (unsigned long long)r->end);
        } else {
            snprintf(buf, sizeof(buf), "anonymous mapping 0x%llx-0x%llx (stacks of running threads, "
                                       "static TLS, a runtime's own memory)",
                     (unsigned long long)r->addr, (unsigned long long)r->end);
        }
        if (!(c->root_name[i] = strdup(buf)))
            rc = -ENOMEM;
    }
    free(raw);
    for (size_t i = 0; i < c->ngroups && rc == 0; i++) {
        if (!c->groups[i].top_stack_nframes)
            continue;
        const struct cli_stack *st = &p.stacks[k++];
        char buf[512];
        size_t o = 0;
        buf[0] = '\0';
        for (uint32_t f = 0; f < st->nframes && f < CENSUS_STACK_SHOWN && o < sizeof(buf); f++) {
            char nb[128];
            int w = snprintf(buf + o, sizeof(buf) - o, "%s%s", f ? " < " : "",
                             cli_stack_frame_name(&st->frames[f], nb, sizeof(nb)));
            if (w < 0)
                break;
            o += (size_t)w;
        }
        if (buf[0] && !(c->group_stack[i] = strdup(buf)))
            rc = -ENOMEM;
    }
    for (size_t i = 0; i < c->nroots && rc == 0; i++) {
        const struct hi_census_root *r = &c->roots[i];
        if (r->kind != HI_ROOT_GLOBAL || !r->via_first_word)
            continue;
        const struct cli_stack *st = &p.stacks[k++];
        const char *t = st->nframes ? cli_census_vtable_type(st->frames[0].function) : NULL;
        if (!t || !c->root_name[i])
            continue;
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s -> %s object (%llu B)", c->root_name[i], t, (unsigned long long)r->via_size);
        free(c->root_name[i]);
        if (!(c->root_name[i] = strdup(buf)))
            rc = -ENOMEM;
        else if (!(c->root_via = c->root_via ? c->root_via : calloc(c->nroots + 1, sizeof(char *))) ||
                 !(c->root_via[i] = strdup(t)))
            rc = -ENOMEM;
    }
    cli_profile_free(&p);
    size_t named = c->nroots; /* merge_elements leaves fewer */
    if (rc == 0)
        rc = merge_elements(c, symbol);
    for (size_t i = 0; i < named; i++)
        free(symbol[i]);
    free(symbol);
    return rc;
}
