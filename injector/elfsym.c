/* elfsym.c - symbols and headers of ELF files, read with libelf. */
#include "injector/elfsym.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct inj_elf {
    int fd;
    Elf *e;
};

int inj_elf_open(int fd, struct inj_elf **out)
{
    struct inj_elf *elf;

    *out = NULL;
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        return -ENOSYS;
    }
    elf = calloc(1, sizeof(*elf));
    if (!elf) {
        close(fd);
        return -ENOMEM;
    }
    elf->fd = fd;
    elf->e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf->e || elf_kind(elf->e) != ELF_K_ELF) {
        inj_elf_close(elf);
        return -ENOEXEC;
    }
    *out = elf;
    return 0;
}

void inj_elf_close(struct inj_elf *elf)
{
    if (!elf)
        return;
    if (elf->e)
        elf_end(elf->e);
    close(elf->fd);
    free(elf);
}

int inj_elf_info(struct inj_elf *elf, struct inj_elf_info *info)
{
    GElf_Ehdr eh;
    size_t nph;

    memset(info, 0, sizeof(*info));
    if (!gelf_getehdr(elf->e, &eh))
        return -ENOEXEC;
    info->elf_class = gelf_getclass(elf->e);
    info->machine = eh.e_machine;
    info->type = eh.e_type;
    if (elf_getphdrnum(elf->e, &nph))
        return 0;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;

        if (gelf_getphdr(elf->e, (int)i, &ph) && ph.p_type == PT_INTERP)
            info->has_interp = true;
    }
    return 0;
}

/* Walks the symbol tables; visit() returns nonzero to stop. `hidden` is set
 * for a non-default version (name@VERSION rather than name@@VERSION). */
static void walk_symbols(struct inj_elf *elf,
                         int (*visit)(void *ctx, const char *name, const GElf_Sym *sym, bool hidden),
                         void *ctx)
{
    static const Elf64_Word kinds[] = { SHT_DYNSYM, SHT_SYMTAB };

    for (size_t k = 0; k < 2; k++) {
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(elf->e, scn))) {
            GElf_Shdr sh;
            Elf_Data *data, *vdata = NULL;
            Elf_Scn *vs = NULL;
            size_t count, symidx = elf_ndxscn(scn);

            if (!gelf_getshdr(scn, &sh) || sh.sh_type != kinds[k] || !sh.sh_entsize)
                continue;
            data = elf_getdata(scn, NULL);
            if (!data)
                continue;
            /* A string table that ends in NUL holds a terminated string at
             * every offset below its size: read names straight from it
             * rather than through elf_strptr's checks for each symbol (a
             * libc has thousands; this walk is on the attach's path). */
            Elf_Data *strs = elf_getdata(elf_getscn(elf->e, sh.sh_link), NULL);
            const char *strbase = strs && strs->d_buf && strs->d_size &&
                                  ((const char *)strs->d_buf)[strs->d_size - 1] == '\0'
                                      ? strs->d_buf : NULL;
            /* .gnu.version is parallel to .dynsym and links to it. */
            while (kinds[k] == SHT_DYNSYM && (vs = elf_nextscn(elf->e, vs))) {
                GElf_Shdr vsh;

                if (gelf_getshdr(vs, &vsh) && vsh.sh_type == SHT_GNU_versym &&
                    vsh.sh_link == symidx) {
                    vdata = elf_getdata(vs, NULL);
                    break;
                }
            }
            count = sh.sh_size / sh.sh_entsize;
            for (size_t i = 1; i < count; i++) {
                GElf_Sym sym;
                GElf_Versym ver = 0;
                const char *name;

                if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
                    continue;
                name = strbase && sym.st_name < strs->d_size ? strbase + sym.st_name
                                                             : elf_strptr(elf->e, sh.sh_link, sym.st_name);
                if (!name || !*name)
                    continue;
                if (vdata)
                    gelf_getversym(vdata, (int)i, &ver);
                if (visit(ctx, name, &sym, (ver & 0x8000) != 0))
                    return;
            }
        }
    }
}

/* The rule of inj_elf_symbol for one candidate: functions, objects and
 * indirect functions only; the first default version (name@@VERSION) wins,
 * else the first hidden one. */
static void consider(struct inj_elf_want *w, const GElf_Sym *sym, bool hidden)
{
    int type = GELF_ST_TYPE(sym->st_info);

    if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC)
        return;
    if (w->found && !(w->hidden && !hidden))
        return;
    w->found = true;
    w->hidden = hidden;
    w->ifunc = type == STT_GNU_IFUNC;
    w->value = sym->st_value;
    w->size = sym->st_size;
}

struct lookup_ctx {
    struct inj_elf_want *want;
    size_t n;
    void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size);
    void *ctx;
};

static int lookup_visit(void *vctx, const char *name, const GElf_Sym *sym, bool hidden)
{
    struct lookup_ctx *c = vctx;
    int type = GELF_ST_TYPE(sym->st_info);

    for (size_t i = 0; i < c->n; i++)
        if (name[0] == c->want[i].name[0] && !strcmp(name, c->want[i].name))
            consider(&c->want[i], sym, hidden);
    if (c->fn && (type == STT_FUNC || type == STT_GNU_IFUNC))
        c->fn(c->ctx, name, sym->st_value, sym->st_size);
    return 0;
}

void inj_elf_lookup(struct inj_elf *elf, struct inj_elf_want *want, size_t n,
                    void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size), void *ctx)
{
    struct lookup_ctx c = { want, n, fn, ctx };

    for (size_t i = 0; i < n; i++) {
        want[i].found = want[i].hidden = want[i].ifunc = false;
        want[i].value = want[i].size = 0;
    }
    walk_symbols(elf, lookup_visit, &c);
}

int inj_elf_want_result(const struct inj_elf_want *w, uint64_t *value, uint64_t *size)
{
    if (!w->found)
        return -ENOENT;
    if (w->ifunc)
        return -ENOTSUP;
    *value = w->value;
    if (size)
        *size = w->size;
    return 0;
}

struct find_ctx {
    struct inj_elf_want *want;
};

static int find_visit(void *vctx, const char *name, const GElf_Sym *sym, bool hidden)
{
    struct find_ctx *c = vctx;

    if (strcmp(name, c->want->name))
        return 0;
    consider(c->want, sym, hidden);
    return c->want->found && !c->want->hidden;
}

int inj_elf_symbol(struct inj_elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
    struct inj_elf_want w = { .name = name };
    struct find_ctx c = { &w };

    walk_symbols(elf, find_visit, &c);
    return inj_elf_want_result(&w, value, size);
}

struct each_ctx {
    void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size);
    void *ctx;
};

static int each_visit(void *vctx, const char *name, const GElf_Sym *sym, bool hidden)
{
    struct each_ctx *c = vctx;
    int type = GELF_ST_TYPE(sym->st_info);

    (void)hidden;
    if (type == STT_FUNC || type == STT_GNU_IFUNC)
        c->fn(c->ctx, name, sym->st_value, sym->st_size);
    return 0;
}

void inj_elf_foreach_func(struct inj_elf *elf,
                          void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size),
                          void *ctx)
{
    struct each_ctx c = { fn, ctx };

    walk_symbols(elf, each_visit, &c);
}

int inj_elf_load_bias(struct inj_elf *elf, uint64_t map_start, uint64_t map_offset,
                      uint64_t *bias)
{
    size_t nph;

    if (elf_getphdrnum(elf->e, &nph))
        return -ENOEXEC;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        uint64_t align;

        if (!gelf_getphdr(elf->e, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        /* The loader maps each segment from its offset rounded down to the
         * page, at its vaddr rounded down by the same amount. */
        align = ph.p_align > 1 ? ph.p_align : 4096;
        if (map_offset < (ph.p_offset & ~(align - 1)) || map_offset > ph.p_offset + ph.p_filesz)
            continue;
        *bias = map_start - (ph.p_vaddr - (ph.p_offset - map_offset));
        return 0;
    }
    return -ENOENT;
}

const char *inj_elf_machine_name(int machine, int elf_class)
{
    switch (machine) {
    case EM_386: return "i386 (32-bit)";
    case EM_X86_64: return elf_class == ELFCLASS32 ? "x32 (32-bit)" : "x86-64";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm (32-bit)";
    case EM_RISCV: return "riscv";
    case EM_PPC64: return "ppc64";
    case EM_S390: return "s390";
    default: return "an unknown architecture";
    }
}
