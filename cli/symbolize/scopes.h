/* scopes.h - the DWARF scopes (functions, inlined calls, blocks)
 * that contain an address, from a per-CU index built by one walk.
 *
 * Replaces dwarf_getscopes(), which walks the CU's DIE tree on every call,
 * and returns the concrete nesting (every inlined call around the address),
 * which dwarf_getscopes does not: after the innermost inlined call it goes
 * on with the scopes of that function's abstract definition. Used by
 * cli/symbolize/symbolize.c only.
 */
#ifndef HI_CLI_SYMBOLIZE_SCOPES_H
#define HI_CLI_SYMBOLIZE_SCOPES_H

#include <elfutils/libdw.h>
#include <stddef.h>

/* The CU indexes of one module (one Dwarf). */
struct cli_scopes;

/* NULL with errno ENOMEM. */
struct cli_scopes *cli_scopes_new(void);

/* The scope DIEs containing pc (relative to the CU's Dwarf, as given to
 * dwarf_getscopes), innermost first, the CU itself not included: written to
 * out (at most max; the outermost are dropped past that). Indexes the CU
 * on its first use. Same containment rules as elfutils' dwarf_getscopes
 * (0.188): the first child in DIE order that contains pc, descending
 * through lexical blocks, functions and inlined calls, and through imported
 * units, namespaces and types (which have no addresses) as if their
 * children were in place. Returns the number of scopes
 * (0 when none contains pc or the CU's DWARF is malformed) or -ENOMEM. The
 * DIEs stay valid as long as the Dwarf and s do. */
int cli_scopes_find(struct cli_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc, const Dwarf_Die **out, size_t max);

/* Frees s; the Dwarf may be gone already. */
void cli_scopes_free(struct cli_scopes *s);

#endif /* HI_CLI_SYMBOLIZE_SCOPES_H */
