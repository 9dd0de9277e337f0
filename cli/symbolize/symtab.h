/* symtab.h - address to ELF symbol name, indexed once per module.
 *
 * Gives the very answer of elfutils' dwfl_module_addrinfo() with a binary
 * search instead of its scan of the whole symbol table on every call (the
 * scan made symbolizing 100,000 PCs in libc take seconds). Used by
 * cli/symbolize/symbolize.c only.
 */
#ifndef HI_CLI_SYMBOLIZE_SYMTAB_H
#define HI_CLI_SYMBOLIZE_SYMTAB_H

#include <elfutils/libdwfl.h>

struct cli_symtab;

/* Indexes the symbol table of mod (its ELF must already be loaded, see
 * dwfl_module_getelf). A module without symbols gives an empty index.
 * NULL with errno ENOMEM on failure. The index points into mod's string
 * tables: free it before the Dwfl that owns mod. */
struct cli_symtab *cli_symtab_new(Dwfl_Module *mod);

/* Name of the symbol dwfl_module_addrinfo(mod, addr) would name (version
 * suffix included), or NULL. The string belongs to the Dwfl. */
const char *cli_symtab_lookup(const struct cli_symtab *t, GElf_Addr addr);

/* The same, and the symbol's address in *start (set when a name is
 * returned). */
const char *cli_symtab_lookup_at(const struct cli_symtab *t, GElf_Addr addr, GElf_Addr *start);

void cli_symtab_free(struct cli_symtab *t);

#endif /* HI_CLI_SYMBOLIZE_SYMTAB_H */
