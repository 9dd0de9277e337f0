/* slots.c - reading the target's malloc-family GOT slots from outside.
 *
 * The payload says how many slots it put back; this checks, independently,
 * what the process's memory holds. For each module (a file mapped at
 * offset 0) the relocation sections of its file name the JUMP_SLOT and
 * GLOB_DAT slots of every hooked function (the same list the payload
 * patches: payload/family.c); each slot is read with pread on /proc/TID/mem and
 * compared against the range where libheapinject.so is mapped. */
#include "cli/process/slots.h"

#include "cli/util/fmt.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/process/paths.h"
#include "injector/maps.h"
#include "injector/target.h"

#define MAPS_MAX (16u << 20)

/* Every function the payload hooks (payload/family.c's names: the cli
 * does not include payload headers): the malloc family, the mmap family,
 * dlsym, the ways to install a seccomp filter. */
static const char *const family[] = { "malloc", "free", "calloc", "realloc", "reallocarray",
                                      "posix_memalign", "aligned_alloc", "memalign", "valloc",
                                      "pvalloc", "mmap", "mmap64", "munmap", "mremap", "dlsym",
                                      "dlvsym", "prctl", "seccomp", "syscall" };

static bool in_family(const char *name)
{
    for (size_t i = 0; i < sizeof(family) / sizeof(family[0]); i++)
        if (!strcmp(name, family[i]))
            return true;
    return false;
}

static bool is_payload(const char *path)
{
    return path && cli_paths_is_payload(path, strlen(path));
}

/* /proc/PID/task/TID/maps into a parsed list. 0 or -errno. */
static int read_maps(pid_t pid, pid_t tid, struct inj_maps *m)
{
    char path[96];
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int fd, r;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid, (int)tid);
    if (!buf)
        return -ENOMEM;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        free(buf);
        return r;
    }
    for (;;) {
        ssize_t n;

        if (len + 1 >= cap) {
            char *nb = cap < MAPS_MAX ? realloc(buf, cap * 2) : NULL;
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    r = inj_maps_parse(buf, m);
    free(buf);
    return r;
}

static void note_hooked(struct cli_slots_report *r, const char *module, const char *func)
{
    size_t n = strlen(r->which);
    const char *base = strrchr(module, '/');

    base = base ? base + 1 : module;
    char shown[256]; /* the module's name is the target's: goes into messages */
    if (n + 8 < sizeof(r->which))
        snprintf(r->which + n, sizeof(r->which) - n, "%s%s:%s", n ? ", " : "",
                 cli_fmt_printable(base, shown, sizeof(shown)), func);
}

/* What a module's walk over its slots does with each slot it reads. */
struct slot_visit {
    void (*slot)(struct slot_visit *v, const struct inj_map *head, const char *func, uint64_t value);
};

/* The malloc-family slots of one module whose file is open as fd, mapped
 * with its ELF header at head: each one read from memfd goes to v. 0; 1
 * when the file is no ELF file at all (a JVM's class data archive or
 * jimage, a database's data file: no GOT, nothing we could have hooked);
 * -1 when unreadable. */
static int visit_module(int fd, int memfd, const struct inj_map *head, struct slot_visit *v)
{
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    uint64_t bias = 0, first = UINT64_MAX;
    size_t nph = 0;
    Elf_Scn *scn = NULL;
    int ret = -1;

    if (e && elf_kind(e) != ELF_K_ELF) {
        ret = 1;
        goto out;
    }
    if (!e || !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || elf_getphdrnum(e, &nph))
        goto out;
    if (eh.e_type == ET_DYN) {
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first)
                first = ph.p_vaddr & ~(uint64_t)0xfff;
        }
        if (first == UINT64_MAX)
            goto out;
        bias = head->start - first;
    }
    ret = 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh, symsh;
        Elf_Data *rel, *syms;
        Elf_Scn *symscn;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
            continue;
        symscn = elf_getscn(e, sh.sh_link);
        if (!symscn || !gelf_getshdr(symscn, &symsh) || !(rel = elf_getdata(scn, NULL)) ||
            !(syms = elf_getdata(symscn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Rela ra;
            GElf_Sym sym;
            const char *name;
            uint64_t value;
            unsigned type;

            if (!gelf_getrela(rel, (int)i, &ra))
                break;
            type = (unsigned)GELF_R_TYPE(ra.r_info);
            if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !GELF_R_SYM(ra.r_info))
                continue;
            if (!gelf_getsym(syms, (int)GELF_R_SYM(ra.r_info), &sym) ||
                !(name = elf_strptr(e, symsh.sh_link, sym.st_name)) || !in_family(name))
                continue;
            if (pread(memfd, &value, sizeof(value), (off_t)(bias + ra.r_offset)) != (ssize_t)sizeof(value)) {
                ret = -1;
                continue;
            }
            v->slot(v, head, name, value);
        }
    }
out:
    if (e)
        elf_end(e);
    return ret;
}

/* Every module mapped in pid (a file mapped at offset 0, the payload
 * excepted), read through tid's /proc entries (a zombie leader has no root
 * or map_files of its own): the modules read and the unreadable ones are
 * counted into *modules and *unreadable. 0 or -errno. */
static int visit_modules(pid_t pid, pid_t tid, const struct inj_maps *m, struct slot_visit *v, unsigned *modules,
                         unsigned *unreadable)
{
    char path[96];
    int memfd, rc;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)pid, (int)tid);
    memfd = open(path, O_RDONLY | O_CLOEXEC);
    if (memfd < 0)
        return -errno;
    elf_version(EV_CURRENT);
    for (size_t i = 0; i < m->n; i++) {
        const struct inj_map *mp = &m->v[i];
        int fd;

        if (mp->offset || !mp->path || mp->path[0] != '/' || is_payload(mp->path) ||
            inj_maps_module_head(m, mp->path) != mp)
            continue;
        fd = inj_maps_open_file(tid, mp);
        if (fd < 0) {
            (*unreadable)++;
            continue;
        }
        rc = visit_module(fd, memfd, mp, v);
        if (rc < 0)
            (*unreadable)++;
        else if (rc == 0)
            (*modules)++;
        close(fd);
    }
    close(memfd);
    return 0;
}

/* cli_slots_check's visit: counts the slots, and those that point into
 * [lo, hi), the payload. */
struct hooked_visit {
    struct slot_visit v;
    uint64_t lo, hi;
    struct cli_slots_report *r;
    const struct inj_map *module; /* the module of the last slot counted */
};

static void count_hooked(struct slot_visit *v, const struct inj_map *head, const char *func, uint64_t value)
{
    struct hooked_visit *h = (struct hooked_visit *)v;

    h->r->slots++;
    if (h->module != head) { /* its modules are visited one after another */
        h->module = head;
        h->r->with_slots++;
    }
    if (h->hi > h->lo && value >= h->lo && value < h->hi) {
        h->r->hooked++;
        note_hooked(h->r, head->path, func);
    }
}

int cli_slots_check(pid_t pid, struct cli_slots_report *r)
{
    struct inj_maps m;
    struct hooked_visit h = { { count_hooked }, UINT64_MAX, 0, r, NULL };
    int rc;

    memset(r, 0, sizeof(*r));
    r->tid = inj_target_live_task(pid);
    if (r->tid < 0)
        return -ESRCH;
    if ((rc = read_maps(pid, r->tid, &m)) < 0)
        return rc;
    for (size_t i = 0; i < m.n; i++)
        if (is_payload(m.v[i].path)) {
            r->payload_mapped = true;
            h.lo = m.v[i].start < h.lo ? m.v[i].start : h.lo;
            h.hi = m.v[i].end > h.hi ? m.v[i].end : h.hi;
        }
    rc = visit_modules(pid, r->tid, &m, &h.v, &r->modules, &r->unreadable);
    inj_maps_free(&m);
    return rc;
}

/* cli_slots_malloc_module's visit: the first malloc slot that the loader
 * has bound (it points out of its own module) names the module it points
 * into. A slot into the payload means our hooks are in place: whose malloc
 * they forward to is not to be read here, and the answer stays unknown. */
struct owner_visit {
    struct slot_visit v;
    const struct inj_maps *m;
    bool hooked;
    const struct inj_map *owner;
};

static void find_owner(struct slot_visit *v, const struct inj_map *head, const char *func, uint64_t value)
{
    struct owner_visit *o = (struct owner_visit *)v;
    const struct inj_map *to;

    if (strcmp(func, "malloc") || o->owner || o->hooked || !(to = inj_maps_find_addr(o->m, value)))
        return;
    if (is_payload(to->path))
        o->hooked = true;
    else if (to->path && to->path[0] == '/' && strcmp(to->path, head->path))
        o->owner = inj_maps_module_head(o->m, to->path);
}

int cli_slots_malloc_module(pid_t pid, char *path, size_t len)
{
    struct inj_maps m;
    struct owner_visit o = { { find_owner }, &m, false, NULL };
    unsigned modules = 0, unreadable = 0;
    pid_t tid = inj_target_live_task(pid);
    int rc;

    if (tid < 0)
        return -ESRCH;
    if ((rc = read_maps(pid, tid, &m)) < 0)
        return rc;
    o.m = &m;
    rc = visit_modules(pid, tid, &m, &o.v, &modules, &unreadable);
    if (rc == 0 && o.owner && !o.hooked) {
        snprintf(path, len, "%s", o.owner->path);
        rc = 1;
    }
    inj_maps_free(&m);
    return rc;
}

int cli_slots_payload_mapped(pid_t pid)
{
    struct inj_maps m;
    pid_t tid = inj_target_live_task(pid);
    int rc, found = 0;

    if (tid < 0)
        return -ESRCH;
    if ((rc = read_maps(pid, tid, &m)) < 0)
        return rc;
    /* No mappings at all: the process is exiting (its memory is torn
     * down before it shows as a zombie), not running a new program. */
    if (m.n == 0) {
        inj_maps_free(&m);
        return -ESRCH;
    }
    for (size_t i = 0; i < m.n && !found; i++)
        found = is_payload(m.v[i].path);
    inj_maps_free(&m);
    return found;
}
