/* symbolize.c - libdw (Dwfl) symbolization of a snapshot's program counters.
 *
 * Modules are reported to Dwfl from the snapshot's maps text with
 * dwfl_report_module() (address range only); Dwfl asks our find_elf
 * callback for the file when a PC first lands in a module, so only the
 * modules that appear in stacks are ever opened. Each PC expands to its
 * inlined frames, innermost first, then the physical function named by its
 * ELF symbol. libdwfl's own lookups scan a whole symbol table or CU per
 * address; the indexes of cli/symbolize/symtab.c and cli/symbolize/scopes.c,
 * built once per module and per CU, answer the same in O(log n). */
#include "common/open_regular.h"
#include "cli/symbolize/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli/util/hindex.h"
#include "cli/symbolize/debughint.h"
#include "cli/symbolize/demangle.h"
#include "cli/util/intern.h"
#include "cli/symbolize/scopes.h"
#include "cli/symbolize/symtab.h"
#include "cli/process/paths.h"
#include "common/maps_line.h"
#include "injector/debuglink.h"

struct sym_module {
    uint64_t low, high;          /* range covered by its mappings */
    uint64_t first_start, first_end, first_offset; /* its first mapping */
    char *path;                  /* as in maps, " (deleted)" cut off */
    char *display;               /* path plus " (deleted)"/" (replaced)" */
    unsigned long inode;
    unsigned dev_major, dev_minor;
    bool deleted, replaced, self, exec;
    bool unreadable;             /* find_elf failed or was never possible */
    bool debuglink_blocked;      /* a debug file it names is not a regular file */
    uint64_t last_offset;        /* file offset of its last merged mapping */
    long alias;                  /* >= 0: a second mapping of the file of mods[alias] at
                                    another address (V8 remaps its builtins' code), -1 */
    bool hit;                    /* a PC of the last run landed here */
    bool dwarf_checked, has_dwarf; /* libdw found DWARF for it (beside it, by
                                    build id, from debuginfod) */
    uint32_t lines_found, lines_missing; /* looked-up PCs with and without file:line */
    bool hint_done;              /* build_id looked up */
    char *build_id;              /* hex, once hint_done */
    Dwfl_Module *mod;            /* NULL: not reported (no code in it) */
    struct cli_symtab *symtab;   /* address -> symbol, built when a PC first lands here */
    struct cli_scopes *scopes;   /* its CUs' scope indexes, each built on first use */
    struct cli_symbolizer *owner;
};

/* Frames of one looked-up PC, stored in the cache's frame array. */
struct sym_entry {
    uint64_t key;                /* PC looked up (return address - 1 or PC) */
    uint32_t first, n;           /* its frames in frames[] */
};

/* Memory that is no file: anonymous (JIT code), [heap], [vdso], ... A PC
 * there is named after it ([jit], [anon], [vdso]), its offset taken from the
 * mapping's start; it takes precedence over a file module whose range
 * (which spans the gaps between its mappings) happens to enclose it. */
struct sym_region {
    uint64_t start, end;
    const char *kind;            /* static string */
};

struct cli_symbolizer {
    pid_t pid;
    int same_mntns;
    char *maps;                  /* maps text the tables below were built from */
    size_t maps_len;
    Dwfl *dwfl;
    struct sym_module *mods;
    size_t nmods;
    struct sym_region *regions;  /* sorted by start, as the maps lines */
    size_t nregions, cap_regions;

    struct sym_entry *entries;   /* addresses looked up, in order */
    size_t nentries, cap_entries;
    struct cli_hindex index;     /* address -> its entry */
    struct cli_frame *frames;    /* cached frames (strings: `strings`') */
    size_t nframes, cap_frames;
    /* Every name, file and module string of the cached frames, once each;
     * profiles symbolized from this cache take a reference to it. */
    struct cli_intern *strings;
};

/* ---- modules from maps ---------------------------------------------------- */

static void free_modules(struct cli_symbolizer *s)
{
    /* The indexes point into the Dwfl's data: gone before it is. */
    for (size_t i = 0; i < s->nmods; i++) {
        cli_symtab_free(s->mods[i].symtab);
        cli_scopes_free(s->mods[i].scopes);
    }
    if (s->dwfl)
        dwfl_end(s->dwfl);
    s->dwfl = NULL;
    for (size_t i = 0; i < s->nmods; i++) {
        free(s->mods[i].path);
        free(s->mods[i].display);
        free(s->mods[i].build_id);
    }
    free(s->mods);
    s->mods = NULL;
    s->nmods = 0;
    free(s->regions);
    s->regions = NULL;
    s->nregions = s->cap_regions = 0;
    free(s->maps);
    s->maps = NULL;
    s->maps_len = 0;
}

static void free_cache(struct cli_symbolizer *s)
{
    /* The frames' strings are the pool's, which profiles may still use. */
    cli_intern_unref(s->strings);
    s->strings = NULL;
    free(s->frames);
    free(s->entries);
    cli_hindex_free(&s->index);
    s->frames = NULL;
    s->entries = NULL;
    s->nframes = s->cap_frames = s->nentries = s->cap_entries = 0;
}

static int add_module(struct cli_symbolizer *s, size_t *cap, const struct hi_maps_line *l)
{
    if (s->nmods == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct sym_module *nm = realloc(s->mods, nc * sizeof(*nm));
        if (!nm)
            return -ENOMEM;
        s->mods = nm;
        *cap = nc;
    }
    struct sym_module *m = &s->mods[s->nmods];
    memset(m, 0, sizeof(*m));
    if (!(m->path = strndup(l->path, l->pathlen)))
        return -ENOMEM;
    m->low = l->start;
    m->high = l->end;
    m->first_start = l->start;
    m->first_end = l->end;
    m->first_offset = l->offset;
    m->last_offset = l->offset;
    m->alias = -1;
    m->inode = l->inode;
    m->dev_major = l->dev_major;
    m->dev_minor = l->dev_minor;
    m->deleted = l->deleted;
    m->exec = l->perms[2] == 'x';
    m->self = m->path && cli_paths_is_payload(m->path, strlen(m->path));
    m->owner = s;
    /* A mapping of a file already loaded, not at its start: the same code
     * at another address (node's V8 remaps its embedded builtins so). */
    if (l->offset != 0)
        for (size_t i = 0; i < s->nmods; i++)
            if (s->mods[i].first_offset == 0 && s->mods[i].inode == m->inode &&
                s->mods[i].dev_major == m->dev_major && s->mods[i].dev_minor == m->dev_minor &&
                !strcmp(s->mods[i].path, m->path)) {
                m->alias = (long)i;
                break;
            }
    s->nmods++;
    return 0;
}

/* What a PC in a mapping that is no file is called in reports. */
static const char *region_kind(const struct hi_maps_line *l)
{
    bool x = l->perms[2] == 'x';
    if (l->path && l->pathlen == 6 && !memcmp(l->path, "[vdso]", 6))
        return "[vdso]";
    if (l->path && l->pathlen == 10 && !memcmp(l->path, "[vsyscall]", 10))
        return "[vsyscall]";
    /* The main thread's stack, as the maps name it (code copied there and
     * run, or a return address that points into it), before [jit]: an
     * executable stack is still a stack. */
    if (l->path && l->pathlen >= 6 && !memcmp(l->path, "[stack", 6))
        return "[stack]";
    /* Code in anonymous memory (or named anonymous memory, the heap) was
     * written at run time: a JIT compiler's. */
    return x ? "[jit]" : "[anon]";
}

static int add_region(struct cli_symbolizer *s, const struct hi_maps_line *l)
{
    if (s->nregions == s->cap_regions) {
        size_t nc = s->cap_regions ? s->cap_regions * 2 : 64;
        struct sym_region *nr = realloc(s->regions, nc * sizeof(*nr));
        if (!nr)
            return -ENOMEM;
        s->regions = nr;
        s->cap_regions = nc;
    }
    s->regions[s->nregions++] = (struct sym_region){ l->start, l->end, region_kind(l) };
    return 0;
}

/* Groups consecutive mappings of the same file into modules. */
static int build_modules(struct cli_symbolizer *s, const char *maps, size_t len)
{
    size_t cap = 0;
    const char *p = maps, *end = maps + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        struct hi_maps_line l;
        /* Files are modules; "[heap]", "[stack]", "[vdso]" and anonymous
         * memory have nothing to read symbols from: regions, which name
         * the frames of code found there ([jit]). */
        if (!hi_maps_line_parse(p, le, &l)) {
            /* not a mapping */
        } else if (l.path && l.path[0] == '/') {
            struct sym_module *last = s->nmods ? &s->mods[s->nmods - 1] : NULL;
            /* The file's next segment: its offsets only grow (a mapping
             * of a lower offset is the same file mapped again). */
            if (last && last->inode == l.inode && last->high <= l.start &&
                strlen(last->path) == l.pathlen && !memcmp(last->path, l.path, l.pathlen) &&
                l.offset >= last->last_offset) {
                last->high = l.end;
                last->last_offset = l.offset;
                last->exec |= l.perms[2] == 'x';
            } else if (add_module(s, &cap, &l) < 0) {
                return -ENOMEM;
            }
        } else if (add_region(s, &l) < 0) {
            return -ENOMEM;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

enum file_match { FILE_SAME, FILE_OTHER, FILE_UNKNOWN };

/* Is the open file the one that was mapped? Inodes are only comparable on
 * the same device: overlayfs and btrfs subvolumes show another st_dev than
 * the maps line, and then we cannot tell. */
static enum file_match same_file(const struct sym_module *m, const struct stat *st)
{
    if (major(st->st_dev) != m->dev_major || minor(st->st_dev) != m->dev_minor)
        return FILE_UNKNOWN;
    return st->st_ino == m->inode ? FILE_SAME : FILE_OTHER;
}

/* root: NULL for path as it is (a map_files magic link, followed on
 * purpose: it is the mapped file itself), "" for a maps path in our own
 * view, else the /proc/PID/root to look the maps path up in. A maps path
 * is never a FIFO or a symbolic link unless the target's user put one
 * where a library was (hi_open_mapped refuses both). */
static int try_open(const char *root, const char *path, const struct sym_module *m,
                    enum file_match *match)
{
    struct stat st;
    int fd = !root ? hi_open_regular(path) : hi_open_mapped(*root ? root : NULL, path);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    *match = same_file(m, &st);
    return fd;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                    char **file_name, Elf **elfp)
{
    struct sym_module *m = *userdata;
    struct cli_symbolizer *s = m->owner;
    char path[PATH_MAX];
    enum file_match match = FILE_UNKNOWN;
    int fd = -1;

    (void)mod;
    (void)modname;
    (void)base;
    *elfp = NULL;
    if (!m->deleted) {
        char root[64];
        snprintf(root, sizeof(root), "/proc/%d/root", (int)s->pid);
        if (s->pid > 0 &&
            snprintf(path, sizeof(path), "%s%s", root, m->path) < (int)sizeof(path) &&
            (fd = try_open(root, m->path, m, &match)) >= 0 && match == FILE_OTHER) {
            m->replaced = true;
            close(fd);
            fd = -1;
        }
        /* Our own root: fine for a target that shared our namespace (also
         * after it exited); for another namespace only if it is provably the
         * very file that was mapped. */
        if (fd < 0 && !m->replaced && snprintf(path, sizeof(path), "%s", m->path) < (int)sizeof(path) &&
            (fd = try_open("", path, m, &match)) >= 0) {
            bool ok = match == FILE_SAME || (match == FILE_UNKNOWN && s->same_mntns != 0);
            if (match == FILE_OTHER && s->same_mntns != 0)
                m->replaced = true;
            if (!ok) {
                close(fd);
                fd = -1;
            }
        }
    }
    /* The mapped file itself, even when deleted or replaced on disk (needs
     * the right to read the target's map_files: root, or CAP_SYS_ADMIN). */
    if (fd < 0 && s->pid > 0 &&
        snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)s->pid,
                 m->first_start, m->first_end) < (int)sizeof(path))
        fd = try_open(NULL, path, m, &match);
    if (fd < 0) {
        m->unreadable = true;
        return -1;
    }
    if (!(*file_name = strdup(path))) {
        close(fd);
        return -1;
    }
    /* libdw opens the debug file it names with a plain open(): a FIFO
     * there would hang us (find_debuginfo below). */
    m->debuglink_blocked = inj_debuglink_blocked(fd, path, 0);
    return fd; /* Dwfl owns fd from here */
}

static char *debuginfo_path;

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    const struct sym_module *m = *userdata;
    if (m && m->debuglink_blocked)
        return -1; /* its own symbols only */
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                        debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static int load_maps(struct cli_symbolizer *s, const char *maps, size_t len)
{
    free_modules(s);
    free_cache(s);
    if (!(s->maps = malloc(len + 1)))
        return -ENOMEM;
    memcpy(s->maps, maps, len);
    s->maps[len] = '\0';
    s->maps_len = len;
    if (build_modules(s, maps, len) < 0)
        return -ENOMEM;
    if (!(s->dwfl = dwfl_begin(&callbacks)))
        return -ENOMEM;
    dwfl_report_begin(s->dwfl);
    for (size_t i = 0; i < s->nmods; i++) {
        struct sym_module *m = &s->mods[i];
        size_t dl = strlen(m->path) + sizeof(" (replaced)");
        if (!(m->display = malloc(dl)))
            return -ENOMEM;
        snprintf(m->display, dl, "%s%s", m->path, m->deleted ? " (deleted)" : "");
        /* A module whose first mapping is not the file's start cannot give
         * Dwfl its load bias; one without code has no frames. */
        if (!m->exec || m->self || m->first_offset != 0)
            continue;
        m->mod = dwfl_report_module(s->dwfl, m->path, m->low, m->high);
        if (m->mod) {
            void **ud = NULL;
            dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
            if (ud)
                *ud = m;
            else
                m->mod = NULL;
        }
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    return 0;
}

static struct sym_module *module_at(struct cli_symbolizer *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nmods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < s->mods[mid].low)
            hi = mid;
        else if (addr >= s->mods[mid].high)
            lo = mid + 1;
        else
            return &s->mods[mid];
    }
    return NULL;
}

static const struct sym_region *region_at(const struct cli_symbolizer *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nregions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < s->regions[mid].start)
            hi = mid;
        else if (addr >= s->regions[mid].end)
            lo = mid + 1;
        else
            return &s->regions[mid];
    }
    return NULL;
}

/* ---- frames --------------------------------------------------------------- */

static struct cli_frame *push_frame(struct cli_symbolizer *s)
{
    if (s->nframes == s->cap_frames) {
        size_t nc = s->cap_frames ? s->cap_frames * 2 : 1024;
        struct cli_frame *nf = realloc(s->frames, nc * sizeof(*nf));
        if (!nf)
            return NULL;
        s->frames = nf;
        s->cap_frames = nc;
    }
    struct cli_frame *f = &s->frames[s->nframes++];
    memset(f, 0, sizeof(*f));
    return f;
}

/* The pool's copy of s (NULL for NULL); *err = -ENOMEM on failure. The
 * frames' strings are all interned: a cached PC's frames are copied into
 * every stack through it, strings shared (cli_profile.strings). */
static char *intern(struct cli_symbolizer *s, const char *str, int *err)
{
    if (!str)
        return NULL;
    const char *d = cli_intern_str(s->strings, str);
    if (!d)
        *err = -ENOMEM;
    return (char *)d; /* immutable: cli_frame's fields are char * for owned strings */
}

static int set_frame(struct cli_symbolizer *s, struct cli_frame *f, uint64_t pc, const struct sym_module *m,
                     uint64_t off, const char *function, const char *file, int line, bool inlined)
{
    int err = 0;
    f->addr = pc;
    f->module_offset = off;
    f->line = line > 0 ? line : 0;
    f->inlined = inlined;
    if (function) {
        char *d = cli_demangle(function);
        if (!d)
            return -ENOMEM;
        f->function = intern(s, d, &err);
        free(d);
    }
    f->file = intern(s, file, &err);
    if (m) {
        /* replaced is only known once find_elf ran, so build the name here. */
        const char *suffix = m->deleted ? " (deleted)" : m->replaced ? " (replaced)" : "";
        size_t pl = strlen(m->path), sl = strlen(suffix);
        char *name = malloc(pl + sl + 1);
        if (!name)
            return -ENOMEM;
        memcpy(name, m->path, pl);
        memcpy(name + pl, suffix, sl + 1);
        f->module = intern(s, name, &err);
        free(name);
    }
    return err;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!n)
        n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!n)
        n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return n;
}

/* Deepest nesting of scopes looked at for one PC (inlined calls and
 * blocks); deeper ones keep their innermost frames. */
#define MAX_SCOPES 256

/* The frame of a PC in memory that is no file: named after the mapping
 * ([jit], [anon], [vdso]), its offset from the mapping's start. */
/* The thread of pid whose stack pointer lies in [start, end): a thread
 * stack is anonymous memory in the maps (only the main one is [stack]).
 * /proc/PID/task/TID/syscall ends with "SP PC" for a thread blocked in a
 * system call (or stopped); a running one says "running". 0 when none. */
static pid_t thread_of_stack(pid_t pid, uint64_t start, uint64_t end)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char file[96], line[256];
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        snprintf(file, sizeof(file), "/proc/%d/task/%ld/syscall", (int)pid, tid);
        FILE *f = fopen(file, "re");
        if (!f)
            continue;
        char *got = fgets(line, sizeof(line), f);
        fclose(f);
        char *last = got ? strrchr(line, ' ') : NULL;
        if (!last || last == line)
            continue;
        *last = '\0';
        char *sp_text = strrchr(line, ' ');
        unsigned long long sp = strtoull(sp_text ? sp_text + 1 : line, NULL, 16);
        if (sp >= start && sp < end)
            found = (pid_t)tid;
    }
    closedir(d);
    return found;
}

static int region_frame(struct cli_symbolizer *s, uint64_t pc, const struct sym_region *r)
{
    struct cli_frame *f = push_frame(s);
    if (!f)
        return -ENOMEM;
    f->addr = pc;
    f->module_offset = pc - r->start;
    int err = 0;
    /* Anonymous memory that a thread's stack pointer is in is that
     * thread's stack: named as old kernels' maps did, [stack:TID]. */
    pid_t tid = strcmp(r->kind, "[vdso]") && strcmp(r->kind, "[vsyscall]") && strcmp(r->kind, "[stack]")
                    ? thread_of_stack(s->pid, r->start, r->end) : 0;
    char name[32];
    if (tid > 0)
        snprintf(name, sizeof(name), "[stack:%d]", (int)tid);
    f = &s->frames[s->nframes - 1]; /* (push_frame may have moved them) */
    f->module = intern(s, tid > 0 ? name : r->kind, &err);
    return err;
}

/* addr in a second mapping of alias's file, as an address in the file's
 * own module (m): the file offset, then the segment holding it. -1 when the
 * file cannot be read or no segment holds that offset. */
static int alias_addr(struct sym_module *alias, struct sym_module *m, uint64_t addr, uint64_t *out)
{
    GElf_Addr bias = 0;
    Elf *elf = m->mod && !m->unreadable ? dwfl_module_getelf(m->mod, &bias) : NULL;
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0)
        return -1;
    uint64_t foff = addr - alias->first_start + alias->first_offset;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && foff >= ph.p_offset &&
            foff - ph.p_offset < ph.p_filesz) {
            *out = bias + ph.p_vaddr + (foff - ph.p_offset);
            return 0;
        }
    }
    return -1;
}

static int expand_in(struct cli_symbolizer *s, struct sym_module *m, uint64_t pc, uint64_t addr);

/* The CU of mod whose line table has the nearest row at or below addr and
 * not below from (the function's start), with that row's file and line;
 * NULL when none has one. Scans every CU: only for the rare address whose
 * CU libdw got wrong. */
static Dwarf_Die *cu_with_line(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr from, const char **file, int *line,
                               Dwarf_Addr *bias)
{
    Dwarf_Die *cu = NULL, *best = NULL;
    Dwarf_Addr b = 0, best_row = 0;
    while ((cu = dwfl_module_nextcu(mod, cu, &b))) {
        Dwarf_Line *ln = dwarf_getsrc_die(cu, addr - b);
        Dwarf_Addr la;
        int l;
        if (!ln || dwarf_lineaddr(ln, &la) != 0 || la + b < from || la + b > addr || la + b < best_row)
            continue;
        const char *f = dwarf_linesrc(ln, NULL, NULL);
        if (!f || dwarf_lineno(ln, &l) != 0)
            continue;
        best = cu;
        best_row = la + b;
        *file = f;
        *line = l;
        *bias = b;
    }
    return best;
}

/* Appends the frames of one PC to the cache's frame array. */
static int expand_pc(struct cli_symbolizer *s, uint64_t pc, uint64_t addr)
{
    const struct sym_region *r = region_at(s, addr);
    if (r)
        return region_frame(s, pc, r);
    struct sym_module *m = module_at(s, addr);
    uint64_t moved;
    if (m && m->alias >= 0 && alias_addr(m, &s->mods[m->alias], addr, &moved) == 0) {
        /* Symbolized as the same code in the file's own mapping (which
         * counts as hit; the alias has no Dwfl module of its own and is
         * not "without symbols"). */
        return expand_in(s, &s->mods[m->alias], moved + (pc - addr), moved);
    }
    return expand_in(s, m, pc, addr);
}

/* expand_pc for a PC of module m (NULL: none). */
static int expand_in(struct cli_symbolizer *s, struct sym_module *m, uint64_t pc, uint64_t addr)
{
    struct cli_frame *f;
    if (m)
        m->hit = true;
    GElf_Addr bias = 0;
    Elf *elf = m && m->mod && !m->unreadable ? dwfl_module_getelf(m->mod, &bias) : NULL;
    if (!elf) {
        if (m && m->mod)
            m->unreadable = true;
        if (!(f = push_frame(s)))
            return -ENOMEM;
        /* No symbols: the offset into the file, as pprof and addr2line use. */
        uint64_t off = m ? pc - m->first_start + m->first_offset : 0;
        return set_frame(s, f, pc, m, off, NULL, NULL, 0, false);
    }
    uint64_t off = pc - bias;
    if (!m->symtab && !(m->symtab = cli_symtab_new(m->mod)))
        return -ENOMEM;
    if (!m->scopes && !(m->scopes = cli_scopes_new()))
        return -ENOMEM;

    GElf_Addr symstart = 0;
    const char *symname = cli_symtab_lookup_at(m->symtab, addr, &symstart);
    char unversioned[512];
    const char *at = symname ? strchr(symname, '@') : NULL;
    if (at && (size_t)(at - symname) < sizeof(unversioned)) {
        /* "__libc_start_main@@GLIBC_2.34" in a .symtab: the version is
         * noise in a report and splits one function into two names. */
        memcpy(unversioned, symname, (size_t)(at - symname));
        unversioned[at - symname] = '\0';
        symname = unversioned;
    }
    const char *file = NULL;
    int line = 0;
    Dwarf_Addr dbias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &dbias);
    Dwfl_Line *dl = dwfl_module_getsrc(m->mod, addr);
    Dwarf_Addr row = 0;
    if (dl)
        file = dwfl_lineinfo(dl, &row, &line, NULL, NULL, NULL);
    if (file && symname && row < symstart) {
        /* The line table row belongs to code before the function: the CU
         * libdw chose does not hold addr, whatever its ranges say. A Go
         * binary's cgo objects carry DWARF 5 range lists that Go's linker
         * (1.19) leaves unrelocated, so its gcc CUs claim every address,
         * and Go's assembly (runtime.asmcgocall) showed as gcc_mmap.c:37.
         * The CU whose line table really covers addr answers instead, or
         * no CU: a frame with no line rather than a wrong one (issue 16). */
        file = NULL;
        line = 0;
        cu = cu_with_line(m->mod, addr, symstart, &file, &line, &dbias);
    }
    if (file)
        m->lines_found++;
    else
        m->lines_missing++;
    const Dwarf_Die *scopes[MAX_SCOPES];
    int nscopes = cu ? cli_scopes_find(m->scopes, cu, addr - dbias, scopes, MAX_SCOPES) : 0;
    if (nscopes < 0)
        return nscopes;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (nscopes > 0 && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;

    /* Innermost first: each inlined call is a frame at the position the
     * previous one left (the line table's for the innermost, then each
     * call site), up to the function the code physically belongs to. */
    for (int i = 0; i < nscopes; i++) {
        Dwarf_Die die = *scopes[i];
        int tag = dwarf_tag(&die);
        if (tag == DW_TAG_inlined_subroutine) {
            if (!(f = push_frame(s)) || set_frame(s, f, pc, m, off, die_name(&die), file, line, true) < 0)
                return -ENOMEM;
            /* The caller's position is the call site of the inlined body. */
            Dwarf_Attribute a;
            Dwarf_Word w;
            file = NULL;
            line = 0;
            if (files && dwarf_formudata(dwarf_attr(&die, DW_AT_call_file, &a), &w) == 0)
                file = dwarf_filesrc(files, w, NULL, NULL);
            if (dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &a), &w) == 0)
                line = (int)w;
        } else if (tag == DW_TAG_subprogram) {
            if (!symname)
                symname = die_name(&die);
            break;
        }
    }
    if (!(f = push_frame(s)))
        return -ENOMEM;
    return set_frame(s, f, pc, m, off, symname, file, line, false);
}

/* The cached frames of a lookup address (expanding it on first sight).
 * The same address always yields the same frames, whichever PC the caller
 * holds: the frames' addr fields are rewritten by the caller. The entry is
 * valid until the next lookup. */
static const struct sym_entry *lookup(struct cli_symbolizer *s, uint64_t pc, uint64_t addr)
{
    long found = cli_hindex_find(&s->index, addr, NULL, NULL);
    if (found >= 0)
        return &s->entries[found];
    if (s->nentries == s->cap_entries) {
        size_t nc = s->cap_entries ? s->cap_entries * 2 : 4096;
        struct sym_entry *ne = realloc(s->entries, nc * sizeof(*ne));
        if (!ne)
            return NULL;
        s->entries = ne;
        s->cap_entries = nc;
    }
    size_t first = s->nframes;
    if (expand_pc(s, pc, addr) < 0 || cli_hindex_add(&s->index, addr, s->nentries) < 0)
        return NULL;
    s->entries[s->nentries] = (struct sym_entry){ addr, (uint32_t)first, (uint32_t)(s->nframes - first) };
    return &s->entries[s->nentries++];
}

/* A Python frame word (issue 29): its code's qualname and file from the
 * agent's SNAP_PYCODE, its line from the word; a code the agent could not
 * name is "?" rather than a guess. */
static int python_frame(struct cli_symbolizer *s, const struct cli_python *py, uint64_t w, struct cli_frame *f)
{
    int err = 0;
    const struct cli_pycode *c = cli_python_code(py, hi_frame_python_code(w));
    memset(f, 0, sizeof(*f));
    f->addr = w;
    f->runtime = HI_FRAME_PYTHON;
    if (hi_frame_python_code(w) == HI_PYCODE_CUT) { /* no code: the stack's callers past the bound */
        char cut[96];
        snprintf(cut, sizeof(cut), "[stack cut at %u frames: the Python callers past it not kept]", HI_MAX_FRAMES);
        f->function = intern(s, cut, &err);
        return err;
    }
    f->function = intern(s, c ? c->name : "?", &err);
    f->file = c ? intern(s, c->file, &err) : NULL;
    f->line = (int)hi_frame_python_line(w);
    return err;
}

static int symbolize_stack(struct cli_symbolizer *s, const struct cli_python *py, struct cli_stack *st)
{
    cli_stack_clear_frames(st);
    /* Drop heapinject's own frames first (hooks, sampler, unwinder). */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < st->npcs; i++) {
        struct sym_module *m = hi_frame_kind(st->pcs[i]) == HI_FRAME_NATIVE ? module_at(s, st->pcs[i]) : NULL;
        if (m && m->self)
            continue;
        st->pcs[keep++] = st->pcs[i];
    }
    st->npcs = keep;

    /* Two passes: look every PC up (each distinct one is expanded once,
     * then found in the cache), then copy its frames into one array of the
     * exact size. The strings are the pool's: no allocation per frame. */
    size_t total = 0;
    for (uint32_t i = 0; i < st->npcs; i++) {
        uint64_t pc = st->pcs[i];
        if (hi_frame_kind(pc) != HI_FRAME_NATIVE) {
            total++;
            continue;
        }
        /* Every PC left is a return address (the payload's own frame, the
         * only one that is not, was dropped above): look up the call
         * instruction, pc - 1, or a call at the end of a function would be
         * attributed to the next function and line. */
        const struct sym_entry *e = lookup(s, pc, pc ? pc - 1 : 0);
        if (!e)
            return -ENOMEM;
        total += e->n;
    }
    if (!total)
        return 0;
    if (total > UINT32_MAX || !(st->frames = malloc(total * sizeof(*st->frames))))
        return -ENOMEM;
    st->shared_strings = true;
    for (uint32_t i = 0; i < st->npcs; i++) {
        uint64_t pc = st->pcs[i];
        if (hi_frame_kind(pc) != HI_FRAME_NATIVE) {
            int err = python_frame(s, py, pc, &st->frames[st->nframes]);
            st->nframes++;
            if (err)
                return err;
            continue;
        }
        const struct sym_entry *e = lookup(s, pc, pc ? pc - 1 : 0); /* cached: cannot fail */
        struct cli_frame *dst = &st->frames[st->nframes];
        memcpy(dst, &s->frames[e->first], e->n * sizeof(*dst));
        for (uint32_t j = 0; j < e->n; j++)
            dst[j].addr = pc;
        st->nframes += e->n;
    }
    return 0;
}

struct cli_symbolizer *cli_symbolizer_new(pid_t pid, int same_mntns)
{
    struct cli_symbolizer *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->pid = pid;
    s->same_mntns = same_mntns;
    return s;
}

/* Does a module the stacks went through lack the debug information that
 * would give its frames file:line? No DWARF at all, or DWARF that covers
 * fewer of its PCs than it misses (node ships DWARF for libuv, none for
 * V8; a module with its debug information misses only a few assembly
 * functions). */
static bool wants_debug(struct sym_module *m)
{
    Dwarf_Addr bias;
    if (!m->mod || m->unreadable)
        return false; /* no symbols at all: said on stderr (cli/cmd) */
    if (!m->dwarf_checked) {
        m->dwarf_checked = true;
        m->has_dwarf = dwfl_module_getdwarf(m->mod, &bias) != NULL;
    }
    return !m->has_dwarf || m->lines_missing > m->lines_found;
}

/* The build id of a module wanting debug information, looked up once. Its
 * package is asked of dpkg only when a report prints the hint
 * (cli_debughint_package_of): a census prints none, and one dpkg-query a
 * module took seconds of a census that printed nothing of it. */
static int hint_lookup(struct cli_symbolizer *s, struct sym_module *m)
{
    m->hint_done = true;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
    if (n > 0) {
        if (!(m->build_id = malloc((size_t)n * 2 + 1)))
            return -ENOMEM;
        for (int i = 0; i < n; i++)
            sprintf(m->build_id + 2 * i, "%02x", bits[i]);
    }
    (void)s;
    return 0;
}

static int fill_debug_hints(struct cli_symbolizer *s, struct cli_profile *p)
{
    cli_profile_clear_debug_hints(p);
    for (size_t i = 0; i < s->nmods; i++) {
        struct sym_module *m = &s->mods[i];
        if (!m->hit || m->self)
            continue;
        if (!wants_debug(m))
            continue;
        if (!m->hint_done && hint_lookup(s, m) < 0)
            return -ENOMEM;
        struct cli_debug_hint *nh = realloc(p->debug_hints, (p->ndebug_hints + 1) * sizeof(*nh));
        if (!nh)
            return -ENOMEM;
        p->debug_hints = nh;
        struct cli_debug_hint *h = &nh[p->ndebug_hints++];
        memset(h, 0, sizeof(*h));
        if (!(h->module = strdup(m->display)) || (m->build_id && !(h->build_id = strdup(m->build_id))))
            return -ENOMEM;
        /* The cli's own files are the target's only in the same namespace. */
        if (s->same_mntns == 1 && !(h->ask_path = strdup(m->path)))
            return -ENOMEM;
    }
    return 0;
}

int cli_symbolizer_run(struct cli_symbolizer *s, struct cli_profile *p)
{
    const char *maps = p->maps ? p->maps : "";
    size_t len = p->maps ? p->maps_len : 0;
    if (!s->dwfl || s->maps_len != len || memcmp(s->maps, maps, len)) {
        int rc = load_maps(s, maps, len);
        if (rc < 0)
            return rc;
    }
    if (!s->strings && !(s->strings = cli_intern_new()))
        return -ENOMEM;
    for (size_t i = 0; i < s->nmods; i++)
        s->mods[i].hit = false;
    /* The profile's frames will point into this symbolizer's pool; the
     * pool its frames pointed into before (if another) stays until every
     * stack is redone, or cleared on failure. */
    struct cli_intern *old = p->strings;
    p->strings = cli_intern_ref(s->strings);
    int rc = 0;
    for (size_t i = 0; i < p->nstacks && rc == 0; i++)
        rc = symbolize_stack(s, &p->python, &p->stacks[i]);
    if (rc < 0)
        for (size_t i = 0; i < p->nstacks; i++)
            cli_stack_clear_frames(&p->stacks[i]);
    cli_intern_unref(old);
    return rc < 0 ? rc : fill_debug_hints(s, p);
}

unsigned cli_symbolizer_unreadable(const struct cli_symbolizer *s, const char **first)
{
    unsigned n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; i < s->nmods; i++) {
        const struct sym_module *m = &s->mods[i];
        if (m->hit && !m->self && (m->unreadable || m->deleted || m->replaced || !m->mod)) {
            if (first && !*first)
                *first = m->display;
            n++;
        }
    }
    return n;
}

void cli_symbolizer_free(struct cli_symbolizer *s)
{
    if (!s)
        return;
    free_modules(s);
    free_cache(s);
    free(s);
}
