/* elfsym.h - symbols and headers of ELF files, read with libelf. */
#ifndef HI_INJECTOR_ELFSYM_H
#define HI_INJECTOR_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inj_elf;   /* an opened ELF file */

struct inj_elf_info {
    int elf_class;      /* ELFCLASS32 / ELFCLASS64 */
    int machine;        /* e_machine: EM_X86_64, EM_386, EM_AARCH64, ... */
    int type;           /* ET_EXEC / ET_DYN */
    bool has_interp;    /* PT_INTERP: started by a dynamic loader */
};

/* Opens an ELF file from fd; takes ownership of fd (closed by
 * inj_elf_close, also on failure). Returns 0 or -errno (-ENOEXEC: not ELF). */
int inj_elf_open(int fd, struct inj_elf **out);
void inj_elf_close(struct inj_elf *elf);

int inj_elf_info(struct inj_elf *elf, struct inj_elf_info *info);

/* Finds a defined function (or object) symbol by name in .dynsym, then
 * .symtab. When several versions exist, the default one (name@@VERSION) wins.
 * GNU indirect functions are refused (-ENOTSUP): calling one would call its
 * resolver. Returns 0 with the link-time value and size, or -ENOENT. */
int inj_elf_symbol(struct inj_elf *elf, const char *name, uint64_t *value, uint64_t *size);

/* Several names at once, in one walk of the tables (a libc has thousands
 * of symbols): each want found by inj_elf_symbol's rules, and fn (may be
 * NULL) called for every defined function symbol as inj_elf_foreach_func
 * does. Read each result with inj_elf_want_result. */
struct inj_elf_want {
    const char *name;
    bool found, hidden, ifunc;
    uint64_t value, size;
};
void inj_elf_lookup(struct inj_elf *elf, struct inj_elf_want *want, size_t n,
                    void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size), void *ctx);
/* 0 with the value (and size), -ENOENT, or -ENOTSUP for an indirect
 * function, as inj_elf_symbol returns. */
int inj_elf_want_result(const struct inj_elf_want *w, uint64_t *value, uint64_t *size);

/* Calls fn for every defined function symbol (both tables, duplicates
 * possible). */
void inj_elf_foreach_func(struct inj_elf *elf,
                          void (*fn)(void *ctx, const char *name, uint64_t value, uint64_t size),
                          void *ctx);

/* The load bias of a module given one of its mappings: the mapping at
 * map_start maps file offset map_offset, so the PT_LOAD segment that covers
 * that offset tells how link-time addresses were shifted. Returns 0 or
 * -ENOENT. */
int inj_elf_load_bias(struct inj_elf *elf, uint64_t map_start, uint64_t map_offset,
                      uint64_t *bias);

/* Short name of an e_machine value ("i386", "aarch64"), for messages. */
const char *inj_elf_machine_name(int machine, int elf_class);

#endif /* HI_INJECTOR_ELFSYM_H */
