/* exe_alloc.c - refuse a process whose allocator is linked into its
 * executable (see exe_alloc.h for why). */
#include "cli/process/exe_alloc.h"
#include "cli/util/file_key.h"

#include "cli/util/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MUSL_STATIC "musl's malloc (musl libc linked into the executable)"

/* Entry points that only an allocator defines. The unprefixed malloc
 * family first: an executable that defines malloc is its own allocator,
 * and libc's slots, bound to it, would show only libc's share. */
static const struct {
    const char *symbol;
    const char *allocator;
} exe_allocators[] = {
    /* musl's own names first: a static musl program defines malloc too,
     * and is no jemalloc (mallocng since 1.2.1, the old malloc before). */
    { "__libc_malloc_impl", MUSL_STATIC },
    { "__malloc_donate", MUSL_STATIC },
    { "malloc", "a statically linked jemalloc, tcmalloc or similar" },
    { "calloc", "a statically linked jemalloc, tcmalloc or similar" },
    { "realloc", "a statically linked jemalloc, tcmalloc or similar" },
    { "free", "a statically linked jemalloc, tcmalloc or similar" },
    { "_rjem_malloc", "jemalloc (Rust tikv-jemallocator)" },
    { "_rjem_mallocx", "jemalloc (Rust tikv-jemallocator)" },
    { "je_malloc", "jemalloc (prefixed build)" },
    { "je_mallocx", "jemalloc (prefixed build)" },
    { "mi_malloc", "mimalloc" },
    { "tc_malloc", "tcmalloc" },
    { "rpmalloc", "rpmalloc" },
};

static size_t allocator_index(const char *symbol)
{
    size_t i;
    for (i = 0; i < sizeof(exe_allocators) / sizeof(exe_allocators[0]); i++)
        if (strcmp(symbol, exe_allocators[i].symbol) == 0)
            break;
    return i;
}

const char *cli_exe_alloc_name(const char *symbol)
{
    size_t i = allocator_index(symbol);
    return i < sizeof(exe_allocators) / sizeof(exe_allocators[0]) ? exe_allocators[i].allocator
                                                                  : NULL;
}

/* Looks through one symbol table for defined allocator functions; keeps
 * the one first in exe_allocators (malloc rather than realloc) in *best. */
static void scan_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, size_t *best)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t n;

    if (!data || sh->sh_entsize == 0)
        return;
    n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym sym;
        const char *name;
        size_t idx;
        int type;

        if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
            continue;
        type = GELF_ST_TYPE(sym.st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC)
            continue;
        /* A local "malloc" is some file's private helper, not the
         * program's allocator. */
        if (GELF_ST_BIND(sym.st_info) == STB_LOCAL)
            continue;
        name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (name && (idx = allocator_index(name)) < *best)
            *best = idx;
    }
}

int cli_exe_alloc_scan(int fd, struct cli_exe_alloc *out)
{
    Elf *e;
    Elf_Scn *scn = NULL;
    size_t none = sizeof(exe_allocators) / sizeof(exe_allocators[0]), best = none;

    memset(out, 0, sizeof(*out));
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -ENOSYS;
    e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e)
        return -ENOEXEC;
    if (elf_kind(e) != ELF_K_ELF) {
        elf_end(e);
        return -ENOEXEC;
    }
    /* Both tables: .dynsym survives strip (and is what the loader binds
     * libc's own slots to), .symtab also names what is not exported. */
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        shstrndx = 0;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
            scan_symtab(e, scn, &sh, &best);
        /* The Go linker always writes this section (build info), also in
         * stripped binaries. */
        const char *sname = shstrndx ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
        if (sname && strcmp(sname, ".go.buildinfo") == 0)
            out->go = 1;
    }
    elf_end(e);
    if (best == none)
        return 0;
    snprintf(out->symbol, sizeof(out->symbol), "%s", exe_allocators[best].symbol);
    out->allocator = exe_allocators[best].allocator;
    return 1;
}

/* The scan's answer by executable (device, inode, size, mtime), for the
 * processes of one command that run the same one (a server's workers):
 * reading its symbol tables was 5% of the cli's CPU attaching PostgreSQL's
 * 14 processes. Attaches run in threads. */
#define SCANNED_MAX 16
static struct scanned {
    struct stat st;
    int r;
    struct cli_exe_alloc a;
} scanned[SCANNED_MAX];
static size_t nscanned;
static pthread_mutex_t scanned_lock = PTHREAD_MUTEX_INITIALIZER;

static int scan_once(int fd, struct cli_exe_alloc *a)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return cli_exe_alloc_scan(fd, a);
    /* Held while the first asker scans: the command's attaches start
     * together, and each would scan at once otherwise. */
    pthread_mutex_lock(&scanned_lock);
    for (size_t i = 0; i < nscanned; i++)
        if (cli_same_file(&scanned[i].st, &st)) {
            *a = scanned[i].a;
            int r = scanned[i].r;
            pthread_mutex_unlock(&scanned_lock);
            return r;
        }
    int r = cli_exe_alloc_scan(fd, a);
    if (r >= 0 && nscanned < SCANNED_MAX)
        scanned[nscanned++] = (struct scanned){ st, r, *a };
    pthread_mutex_unlock(&scanned_lock);
    return r;
}

int cli_exe_alloc_check(pid_t pid)
{
    struct cli_exe_alloc a;
    char path[64], exe[512];
    ssize_t len;
    int fd, r;

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    /* The target checks before this one already said what is wrong with
     * an unreadable executable; here, not knowing means not refusing. */
    if (fd < 0)
        return 0;
    r = scan_once(fd, &a);
    close(fd);
    len = readlink(path, exe, sizeof(exe) - 1);
    exe[len > 0 ? len : 0] = '\0';
    if (r == 0 && a.go)
        fprintf(stderr,
                "heapinject: note: pid %d (%s) is a Go program: memory Go code allocates comes from the "
                "Go runtime's own heap, which heapinject does not see; only what C code allocates "
                "(cgo, C libraries) is profiled. For the Go heap, use runtime/pprof or net/http/pprof.\n",
                (int)pid, exe[0] ? exe : "?");
    if (r <= 0)
        return 0;
    fprintf(stderr,
            "heapinject: pid %d (%s) has its own allocator linked into the executable: "
            "it defines %s (%s).\n"
            "Its own allocations are direct calls that no GOT slot sees, so heapinject would "
            "show only what shared libraries allocate. The process was not touched.\n"
            "Use the allocator's own profiler instead (jemalloc: MALLOC_CONF=prof:true; "
            "tcmalloc: HEAPPROFILE), or link it as a shared library.\n",
            (int)pid, exe[0] ? exe : "?", a.symbol, a.allocator);
    return CLI_EXIT_UNSUPPORTED;
}
