/* cfi_hints.h - the return addresses a followed fork child missed in its
 * unwind-rule cache, handed to the parent that follows it.
 *
 * A child inherits its parent's rule cache (cfi.h) as it was at the fork,
 * and what the child adds is lost with it. A server's children run code
 * the parent never runs (a PostgreSQL backend: the postmaster runs no
 * query), so every child computed the same rules again from the CFI and
 * copied a page of the cache for each (~3% of a PostgreSQL server's CPU
 * under `pgbench -C -S`, followed). Here a child appends each address it
 * missed to a small ring shared with the parent (one MAP_SHARED page made
 * before the fork, plain stores: nothing on the hook path but a miss
 * already costs); the parent's agent computes the rules in its own
 * address space and caches them, so that later children are born with
 * them. A rule is only ever computed by the process that caches it, from
 * its own modules: an address that means other code in a child (one that
 * loaded a library) costs the parent a wasted lookup, never a wrong rule.
 */
#ifndef PL_CFI_HINTS_H
#define PL_CFI_HINTS_H

#include <stdint.h>

#define PL_CFI_HINTS 504u /* slots of the ring: one page with its head */

/* Agent of a process that follows its children, before it forks any:
 * maps the ring (once per process; kept, as the arenas). 0 or -errno. */
int pl_cfi_hints_open(void);

/* A followed child's agent start: this process's misses go to its
 * parent's ring from now on (and it drains none). */
void pl_cfi_hints_as_child(void);

/* From pl_cfi_miss: ra goes to the ring, in a child (a few stores). */
void pl_cfi_hint(uintptr_t ra);

/* The parent's agent: caches the rules of up to max hinted addresses not
 * cached yet (with the reentrancy guard held, as pl_cfi_miss). The number
 * taken from the ring. */
unsigned pl_cfi_hints_drain(unsigned max);

#endif
