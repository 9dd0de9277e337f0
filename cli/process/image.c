/* image.c - the end of a module's image, from its headers in memory. */
#include "cli/process/image.h"

#include <elf.h>
#include <string.h>

uint64_t cli_image_end(uint64_t base, cli_mem_reader read, void *ctx)
{
    Elf64_Ehdr eh;
    Elf64_Phdr ph[32];

    if (!read || read(ctx, base, &eh, sizeof(eh)) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
        eh.e_phnum > 32 || read(ctx, base + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) != 0)
        return 0;
    uint64_t first = UINT64_MAX, end = 0;
    for (unsigned j = 0; j < eh.e_phnum; j++) {
        if (ph[j].p_type != PT_LOAD)
            continue;
        if (first == UINT64_MAX)
            first = ph[j].p_vaddr & ~(uint64_t)4095;
        if (ph[j].p_vaddr + ph[j].p_memsz > end)
            end = ph[j].p_vaddr + ph[j].p_memsz;
    }
    if (first == UINT64_MAX)
        return 0;
    /* The load bias: the first mapping is the first PT_LOAD, page-aligned. */
    return base - first + ((end + 4095) & ~(uint64_t)4095);
}
