/* image.h - where a module's image ends in the target: its ELF header and
 * program headers, read from the target's memory at the module's first
 * mapping, give the load bias and the last PT_LOAD's p_vaddr + p_memsz.
 * Past the last page of the file the kernel maps the rest of .bss as
 * anonymous memory: the maps show it nameless, right after the module. */
#ifndef HI_CLI_PROCESS_IMAGE_H
#define HI_CLI_PROCESS_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Reads len bytes of the target's memory at addr into buf: 0 or -errno.
 * (The RSS split's reader too: cli/memory/breakdown.h.) */
typedef int (*cli_mem_reader)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The page-rounded end of the image of the module whose ELF header is
 * mapped at base, or 0 when its headers cannot be read or make no sense. */
uint64_t cli_image_end(uint64_t base, cli_mem_reader read, void *ctx);

#endif /* HI_CLI_PROCESS_IMAGE_H */
