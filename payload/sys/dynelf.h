/* dynelf.h - reading a loaded module's dynamic section (no files, no heap).
 *
 * Everything comes from memory the dynamic linker already mapped: PT_DYNAMIC
 * of the module as dl_iterate_phdr reports it. glibc on x86-64 relocates the
 * d_ptr entries in place (elf/get-dynamic-info.h), but not for every module
 * (the vDSO; other libcs), so an address below the load base is taken as
 * unrelocated and the base is added.
 */
#ifndef HI_PAYLOAD_DYNELF_H
#define HI_PAYLOAD_DYNELF_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

struct pl_dyn {
    uintptr_t base;          /* dlpi_addr */
    uintptr_t lo, hi;        /* span of the PT_LOAD segments */
    const ElfW(Sym) *symtab;
    const char *strtab;
    size_t strsz;
    size_t nsyms;            /* from DT_HASH or DT_GNU_HASH; 0 if unknown */
    const uint32_t *gnu_hash; /* DT_GNU_HASH, NULL if none */
    const ElfW(Rela) *rela;  /* DT_RELA */
    size_t relasz;
    const ElfW(Rela) *jmprel; /* DT_JMPREL (only when DT_PLTREL is DT_RELA) */
    size_t pltrelsz;
    const ElfW(Versym) *versym;
    const char *needed[16];  /* DT_NEEDED names (first 16) */
    unsigned nneeded;
};

/* Fills d from a dl_iterate_phdr entry. 0, or -ENOEXEC when the module has
 * no usable dynamic section. */
int pl_dyn_parse(const struct dl_phdr_info *info, struct pl_dyn *d);

/* Name of symbol index i, or NULL if out of bounds. */
const char *pl_dyn_sym_name(const struct pl_dyn *d, size_t i);

/* Address of the default-version definition of `name` in this module (a
 * function or object with a value), or 0. Through DT_GNU_HASH (the
 * symbols of name's hash chain), else linear over nsyms symbols: a
 * linear scan of a large executable's table (postgres: 12,000 symbols,
 * a strcmp each) cost a followed fork child ~3 ms at its agent's start. */
uintptr_t pl_dyn_lookup(const struct pl_dyn *d, const char *name);

#endif /* HI_PAYLOAD_DYNELF_H */
