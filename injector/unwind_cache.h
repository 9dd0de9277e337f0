/* unwind_cache.h - the safe-point walk's view of the target, cached.
 *
 * libunwind-ptrace reads the target one word per PTRACE_PEEKDATA (about
 * 700 system calls for a 7-frame walk), finds a frame's unwind table by
 * reading /proc/PID/maps and mapping the module's file again for every
 * frame, and names a frame the same way plus three debug-link lookups:
 * 9-12 ms of the 15 ms an attach took (issue 17). This gives the walk the
 * same answers from caches that live for one injection:
 * - memory: whole pages with process_vm_readv, kept for one walk (the
 *   stack changes between walks; the unwind tables never do);
 * - unwind tables: a module's .eh_frame_hdr search table located once,
 *   from the ELF and program headers in the target's memory, then searched
 *   by libunwind's own dwarf_search_unwind_table;
 * - names: a module's function symbols (.dynsym and .symtab of its file)
 *   read once and sorted.
 * Anything these cannot answer (no .eh_frame_hdr, a frame no symbol
 * covers) returns "not found": the caller then asks libunwind-ptrace's own
 * accessors, as before.
 */
#ifndef HI_INJECTOR_UNWIND_CACHE_H
#define HI_INJECTOR_UNWIND_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/maps.h"

struct inj_uwc; /* opaque */

/* A cache over the target's mappings (which must outlive it). NULL on ENOMEM. */
struct inj_uwc *inj_uwc_new(const struct inj_maps *maps);
void inj_uwc_free(struct inj_uwc *c);

/* A new walk of thread tid: forgets the memory pages read before. */
void inj_uwc_begin(struct inj_uwc *c, pid_t tid);

/* The 8 bytes at addr. 0, or -1 when they cannot be read this way. */
int inj_uwc_read(struct inj_uwc *c, uint64_t addr, uint64_t *val);

/* The unwind info of the module containing ip, in libunwind's terms
 * (unw_dyn_info_t, UNW_INFO_FORMAT_REMOTE_TABLE). NULL when the module
 * has no usable .eh_frame_hdr. */
const void *inj_uwc_table(struct inj_uwc *c, uint64_t ip);

/* The function containing ip, from its module's symbols; 0 with name and
 * offset, or -1. Where symbols overlap, a name that marks an unsafe frame
 * (inj_safepoint_unsafe_name) wins. */
int inj_uwc_name(struct inj_uwc *c, uint64_t ip, char *buf, size_t len, uint64_t *off);

/* libunwind-ptrace's answer for ip's place in its file, when an earlier
 * walk (of this or another process of the same command) asked it: true
 * with *rc (0 with name and offset, or -UNW_ENOINFO). */
bool inj_uwc_name_known(struct inj_uwc *c, uint64_t ip, char *buf, size_t len, uint64_t *off, int *rc);

/* Keeps libunwind-ptrace's answer for ip (only 0 and -UNW_ENOINFO: the
 * answers the file alone decides). */
void inj_uwc_name_remember(struct inj_uwc *c, uint64_t ip, int rc, const char *name, uint64_t off);

#endif /* HI_INJECTOR_UNWIND_CACHE_H */
