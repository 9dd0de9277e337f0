/* dynelf.c - dynamic section, symbol count, symbol lookup. */
#include "payload/sys/dynelf.h"

#include <errno.h>
#include <string.h>

static uintptr_t fix(const struct pl_dyn *d, ElfW(Addr) v)
{
    return v < d->base ? d->base + v : v;
}

/* DT_GNU_HASH does not store the symbol count: it is one past the last
 * symbol of the longest chain (the last bucket's chain ends with bit 0). */
static size_t gnu_hash_nsyms(const uint32_t *gh)
{
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

int pl_dyn_parse(const struct dl_phdr_info *info, struct pl_dyn *d)
{
    memset(d, 0, sizeof(*d));
    d->base = info->dlpi_addr;
    d->lo = UINTPTR_MAX;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        else if (ph->p_type == PT_LOAD) {
            uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
            if (s < d->lo)
                d->lo = s;
            if (e > d->hi)
                d->hi = e;
        }
    }
    if (!dyn)
        return -ENOEXEC;

    uintptr_t symtab = 0, strtab = 0, rela = 0, jmprel = 0, hash = 0, gnu_hash = 0, versym = 0;
    size_t needed_off[16];
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *e = dyn; e->d_tag != DT_NULL; e++) {
        switch (e->d_tag) {
        case DT_SYMTAB: symtab = e->d_un.d_ptr; break;
        case DT_STRTAB: strtab = e->d_un.d_ptr; break;
        case DT_STRSZ: d->strsz = e->d_un.d_val; break;
        case DT_RELA: rela = e->d_un.d_ptr; break;
        case DT_RELASZ: d->relasz = e->d_un.d_val; break;
        case DT_JMPREL: jmprel = e->d_un.d_ptr; break;
        case DT_PLTRELSZ: d->pltrelsz = e->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)e->d_un.d_val; break;
        case DT_HASH: hash = e->d_un.d_ptr; break;
        case DT_GNU_HASH: gnu_hash = e->d_un.d_ptr; break;
        case DT_VERSYM: versym = e->d_un.d_ptr; break;
        case DT_NEEDED:
            if (d->nneeded < 16)
                needed_off[d->nneeded++] = e->d_un.d_val;
            break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return -ENOEXEC;
    d->symtab = (const ElfW(Sym) *)fix(d, symtab);
    d->strtab = (const char *)fix(d, strtab);
    if (rela && d->relasz)
        d->rela = (const ElfW(Rela) *)fix(d, rela);
    if (jmprel && d->pltrelsz && pltrel == DT_RELA)
        d->jmprel = (const ElfW(Rela) *)fix(d, jmprel);
    if (versym)
        d->versym = (const ElfW(Versym) *)fix(d, versym);
    if (hash)
        d->nsyms = ((const uint32_t *)fix(d, hash))[1]; /* nchain */
    else if (gnu_hash)
        d->nsyms = gnu_hash_nsyms((const uint32_t *)fix(d, gnu_hash));
    if (gnu_hash)
        d->gnu_hash = (const uint32_t *)fix(d, gnu_hash);
    for (unsigned i = 0; i < d->nneeded; i++)
        d->needed[i] = needed_off[i] < d->strsz ? d->strtab + needed_off[i] : "";
    return 0;
}

const char *pl_dyn_sym_name(const struct pl_dyn *d, size_t i)
{
    if (d->nsyms && i >= d->nsyms)
        return NULL;
    size_t off = d->symtab[i].st_name;
    if (d->strsz && off >= d->strsz)
        return NULL;
    return d->strtab + off;
}

/* Whether symbol i is the default-version definition of name: a
 * function or object with a value. */
static int defines(const struct pl_dyn *d, size_t i, const char *name)
{
    const ElfW(Sym) *s = &d->symtab[i];
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0)
        return 0;
    int type = ELF64_ST_TYPE(s->st_info);
    if (type != STT_FUNC && type != STT_OBJECT)
        return 0;
    if (d->versym && (d->versym[i] & 0x8000))
        return 0; /* hidden (non-default) version */
    const char *n = pl_dyn_sym_name(d, i);
    return n && strcmp(n, name) == 0;
}

/* The GNU hash of a name (the dynamic linker's dl_new_hash). */
static uint32_t gnu_hash_of(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

/* Through the GNU hash table: only the symbols of name's chain. The
 * symbols below symoffset are in no chain (undefined ones: the dynamic
 * linker cannot find them either). */
static uintptr_t gnu_lookup(const struct pl_dyn *d, const char *name)
{
    const uint32_t *gh = d->gnu_hash;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
    if (nbuckets == 0)
        return 0;
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash_of(name);
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return 0;
    for (;; i++) {
        if (d->nsyms && i >= d->nsyms)
            return 0;
        uint32_t ch = chain[i - symoffset];
        if ((ch | 1) == (h | 1) && defines(d, i, name))
            return d->base + d->symtab[i].st_value;
        if (ch & 1)
            return 0;
    }
}

uintptr_t pl_dyn_lookup(const struct pl_dyn *d, const char *name)
{
    if (d->gnu_hash)
        return gnu_lookup(d, name);
    for (size_t i = 1; i < d->nsyms; i++)
        if (defines(d, i, name))
            return d->base + d->symtab[i].st_value;
    return 0;
}
