/* libc_layout.c - glibc's struct malloc_state and main_arena from libc's
 * debug information (libc6-dbg, a build-id file under /usr/lib/debug, or
 * debuginfod when DEBUGINFOD_URLS is set), through libdw.
 *
 * The census walks glibc's heap without them (built-in offsets and a
 * structure-independent search for main_arena); with them it uses the
 * offsets the library itself was built with and checks main_arena's
 * address against what it finds. Both come from malloc/malloc.c's
 * compilation unit: the variable main_arena (its DW_OP_addr location, a
 * file address: + the load base) and the members of struct malloc_state. */
#include "cli/census/libc_layout.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/process/proc.h"
#include "cli/util/file_key.h"
#include "common/maps_line.h"
#include "injector/maps.h"

static const char *die_name(Dwarf_Die *d)
{
    const char *n = dwarf_diename(d);
    return n ? n : "";
}

static int member_offset(Dwarf_Die *st, const char *name, uint32_t *off)
{
    Dwarf_Die m;
    if (dwarf_child(st, &m) != 0)
        return -1;
    do {
        Dwarf_Attribute a;
        Dwarf_Word v;
        if (dwarf_tag(&m) == DW_TAG_member && !strcmp(die_name(&m), name) &&
            dwarf_attr(&m, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &v) == 0) {
            *off = (uint32_t)v;
            return 0;
        }
    } while (dwarf_siblingof(&m, &m) == 0);
    return -1;
}

/* Elements of the array type of member name (fastbinsY[NFASTBINS]). */
static int member_count(Dwarf_Die *st, const char *name, uint32_t *count)
{
    Dwarf_Die m, t, sub;
    Dwarf_Attribute a;
    if (dwarf_child(st, &m) != 0)
        return -1;
    do {
        if (dwarf_tag(&m) != DW_TAG_member || strcmp(die_name(&m), name))
            continue;
        if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) || dwarf_tag(&t) != DW_TAG_array_type ||
            dwarf_child(&t, &sub) != 0)
            return -1;
        Dwarf_Word v;
        if (dwarf_attr(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &v) == 0)
            *count = (uint32_t)v;
        else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &v) == 0)
            *count = (uint32_t)v + 1;
        else
            return -1;
        return 0;
    } while (dwarf_siblingof(&m, &m) == 0);
    return -1;
}

/* In malloc.c's unit: struct malloc_state's offsets and main_arena. */
static int from_unit(Dwarf_Die *cu, struct hi_census_layout *l, uint64_t *arena_vaddr)
{
    Dwarf_Die d;
    int have_struct = 0, have_var = 0;
    if (dwarf_child(cu, &d) != 0)
        return -1;
    do {
        int tag = dwarf_tag(&d);
        if (tag == DW_TAG_structure_type && !have_struct && !strcmp(die_name(&d), "malloc_state") &&
            dwarf_hasattr(&d, DW_AT_byte_size)) {
            Dwarf_Word size;
            Dwarf_Attribute a;
            if (dwarf_attr(&d, DW_AT_byte_size, &a) && dwarf_formudata(&a, &size) == 0 &&
                member_offset(&d, "fastbinsY", &l->fastbins) == 0 && member_offset(&d, "top", &l->top) == 0 &&
                member_offset(&d, "bins", &l->bins) == 0 && member_offset(&d, "next", &l->next) == 0 &&
                member_offset(&d, "system_mem", &l->system_mem) == 0 &&
                member_count(&d, "fastbinsY", &l->nfastbins) == 0) {
                l->size = (uint32_t)size;
                have_struct = 1;
            }
        } else if (tag == DW_TAG_variable && !have_var && !strcmp(die_name(&d), "main_arena")) {
            Dwarf_Attribute a;
            Dwarf_Op *ops;
            size_t nops;
            if (dwarf_attr(&d, DW_AT_location, &a) && dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 &&
                ops[0].atom == DW_OP_addr) {
                *arena_vaddr = ops[0].number;
                have_var = 1;
            }
        }
    } while (dwarf_siblingof(&d, &d) == 0 && !(have_struct && have_var));
    return have_struct && have_var ? 0 : -1;
}

/* libc's path and load base (its mapping at file offset 0). */
static int find_libc(pid_t pid, char *path, size_t len, uint64_t *base)
{
    size_t n = 0;
    char *maps = cli_proc_maps_text(pid, &n);
    if (!maps)
        return -1;
    int found = -1;
    struct hi_maps_lines it = hi_maps_lines_of(maps, n);
    struct hi_maps_line m;
    while (found < 0 && hi_maps_lines_next_parsed(&it, &m)) {
        if (!m.path || m.offset != 0 || m.deleted)
            continue;
        const char *slash = memrchr(m.path, '/', m.pathlen);
        const char *bn = slash ? slash + 1 : m.path;
        size_t bl = m.pathlen - (size_t)(bn - m.path);
        if (bl >= 7 && !strncmp(bn, "libc.so", 7) && bl < 16) {
            snprintf(path, len, "/proc/%d/root%.*s", (int)pid, (int)m.pathlen, m.path);
            *base = m.start;
            found = 0;
        }
    }
    free(maps);
    return found;
}

static const Dwfl_Callbacks offline = {
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* main_arena from the debug file's symbol table alone: libdwfl finds the
 * file by build id and reads .symtab and .strtab, which are not
 * compressed; .debug_info is (libc6-dbg: 2.3 MiB of zlib), and inflating
 * it took ~130 ms of every attach once the heap check ran before it.
 * Taken only when the symbol has exactly the size of the built-in layout
 * of x86-64's struct malloc_state; the walks check what they read
 * against it (lists that end, a heap that ends at top) in any case. */
static int from_symtab(Dwfl_Module *mod, struct hi_census_layout *l, uint64_t *arena_vaddr)
{
    static const struct hi_census_layout builtin = HI_CENSUS_LAYOUT_GLIBC_X86_64;
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
        if (name && GELF_ST_TYPE(sym.st_info) == STT_OBJECT && !strcmp(name, "main_arena")) {
            if (sym.st_size != builtin.size)
                return -1;
            *l = builtin;
            *arena_vaddr = sym.st_value;
            return 0;
        }
    }
    return -1;
}

/* The layout and main_arena's file address in one libc file (at path):
 * 0, or -errno with where saying why not. */
static int layout_of_file(const char *path, struct hi_census_layout *l, uint64_t *vaddr, char *where, size_t wlen);

/* layout_of_file's answers by libc file (device, inode, size, mtime), for
 * the processes of one command that map the same libc: libdwfl's look for
 * the debug file and its symbol table walk were ~5% of the cli's CPU
 * attaching PostgreSQL's 14 processes, each asked again. Attaches run in
 * threads. */
#define LAYOUTS_MAX 8
static struct known_layout {
    struct stat st;
    int rc;
    struct hi_census_layout l;
    uint64_t vaddr;
    char where[512];
} layouts[LAYOUTS_MAX];
static size_t nlayouts;
static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;

static int layout_once(const char *path, struct hi_census_layout *l, uint64_t *vaddr, char *where, size_t wlen)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return layout_of_file(path, l, vaddr, where, wlen);
    /* Held while the first asker reads the file: the command's attaches
     * start together, and each would read it at once otherwise. */
    pthread_mutex_lock(&layouts_lock);
    for (size_t i = 0; i < nlayouts; i++)
        if (cli_same_file(&layouts[i].st, &st)) {
            *l = layouts[i].l;
            *vaddr = layouts[i].vaddr;
            snprintf(where, wlen, "%s", layouts[i].where);
            int rc = layouts[i].rc;
            pthread_mutex_unlock(&layouts_lock);
            return rc;
        }
    int rc = layout_of_file(path, l, vaddr, where, wlen);
    if (nlayouts < LAYOUTS_MAX) {
        struct known_layout *k = &layouts[nlayouts++];
        k->st = st;
        k->rc = rc;
        k->l = *l;
        k->vaddr = *vaddr;
        snprintf(k->where, sizeof(k->where), "%s", where);
    }
    pthread_mutex_unlock(&layouts_lock);
    return rc;
}

/* The layout of the libc at path, loaded at base. */
static int layout_at(const char *path, uint64_t base, struct hi_census_layout *l, char *where, size_t wlen)
{
    uint64_t vaddr = 0;
    int rc = layout_once(path, l, &vaddr, where, wlen);
    /* file addresses; libc's first segment is at 0 */
    if (rc == 0)
        l->main_arena = base + vaddr;
    return rc;
}

int cli_census_libc_layout(pid_t pid, struct hi_census_layout *l, char *where, size_t wlen)
{
    char path[4096];
    uint64_t base = 0;
    memset(l, 0, sizeof(*l));
    snprintf(where, wlen, "libc was not found in the process's maps");
    if (find_libc(pid, path, sizeof(path), &base) < 0)
        return -ENOENT;
    return layout_at(path, base, l, where, wlen);
}

int cli_census_libc_layout_in(pid_t pid, const struct inj_maps *maps, struct hi_census_layout *l, char *where,
                              size_t wlen)
{
    memset(l, 0, sizeof(*l));
    snprintf(where, wlen, "libc was not found in the process's maps");
    for (size_t i = 0; i < maps->n; i++) {
        const struct inj_map *m = &maps->v[i];
        const char *slash = strrchr(m->path, '/');
        const char *bn = slash ? slash + 1 : m->path;
        if (m->path[0] != '/' || m->offset != 0 || m->deleted || strncmp(bn, "libc.so", 7) || strlen(bn) >= 16)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
        return layout_at(path, m->start, l, where, wlen);
    }
    return -ENOENT;
}

static int layout_of_file(const char *path, struct hi_census_layout *l, uint64_t *vaddr, char *where, size_t wlen)
{
    memset(l, 0, sizeof(*l));
    *vaddr = 0;
    Dwfl *dwfl = dwfl_begin(&offline);
    if (!dwfl)
        return -ENOMEM;
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_offline(dwfl, "libc", path, -1);
    dwfl_report_end(dwfl, NULL, NULL);
    Dwarf_Addr bias = 0;
    int rc = -ENOENT;
    snprintf(where, wlen, "no debug information for libc (apt-get install libc6-dbg, or set DEBUGINFOD_URLS)");
    if (mod && from_symtab(mod, l, vaddr) == 0) {
        const char *dbg = NULL;
        dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &dbg);
        snprintf(where, wlen, "%s (main_arena's symbol)", dbg ? dbg : "libc's symbol table");
        dwfl_end(dwfl);
        return 0;
    }
    memset(l, 0, sizeof(*l));
    Dwarf *dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dw, off + hsize, &cu)) {
            const char *n = die_name(&cu);
            size_t nl = strlen(n);
            if (nl >= 8 && !strcmp(n + nl - 8, "malloc.c") && from_unit(&cu, l, vaddr) == 0) {
                const char *dbg = NULL;
                dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &dbg);
                snprintf(where, wlen, "%s", dbg ? dbg : "libc's own debug information");
                rc = 0;
                break;
            }
        }
        off = next;
    }
    if (dw && rc < 0)
        snprintf(where, wlen, "libc's debug information has no malloc.c with struct malloc_state and main_arena");
    dwfl_end(dwfl);
    return rc;
}
