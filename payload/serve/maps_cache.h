/* maps_cache.h - the maps text a followed fork child's last snapshot
 * sends (issue 28, item 3: `pgbench -C` while following).
 *
 * Reading /proc/self/maps was a third of a followed PostgreSQL backend's
 * last snapshot (the kernel prints each of its ~400 mappings, a d_path
 * for each file): 0.4 ms of CPU per connection. A child's maps serve the
 * cli to place its stacks' return addresses in their files, and a fork
 * child's files are its parent's as long as its loader has loaded and
 * unloaded nothing since. So the parent's agent (following) keeps its
 * maps text, read again whenever its loader's counts (dl_iterate_phdr's
 * adds and subs) change; the child inherits the copy (copy-on-write, only
 * read) and its last snapshot sends it when its own counts are still the
 * copy's. Code mapped without the loader (a JIT's anonymous pages) is
 * unnamed either way. Its anonymous lines are the parent's at the read,
 * not the child's: the cli uses them for nothing (an address there is
 * named by no file). A process that dlopens or dlcloses reads its own.
 *
 * Agent thread only (one reader and writer per process). The copy is
 * marked invalid while it is rewritten: a fork meanwhile gives the child
 * a prefix of the agent's writes (a write to a page fork has already
 * protected waits for the fork to end), so a child sees either the old
 * whole copy, or the mark, never a torn text.
 */
#ifndef HI_PAYLOAD_MAPS_CACHE_H
#define HI_PAYLOAD_MAPS_CACHE_H

#include <stddef.h>

/* Bytes kept at most; a longer maps text is not kept. */
#define PL_MAPS_CACHE_BYTES (1u << 20)

/* Agent: (re)reads this process's maps into the copy unless the copy
 * already matches the loader's counts. Mapped on first use (untouched
 * pages cost nothing). 0, or -errno (no copy then). */
int pl_maps_cache_refresh(void);

/* Agent: the copy, when the loader's counts now are the ones it was read
 * at (this process's or an ancestor's before the fork): its text and
 * length, else NULL. */
const char *pl_maps_cache_current(size_t *len);

/* Agent, at detach: the copy's pages go back (it reads as no copy). */
void pl_maps_cache_release(void);

#endif /* HI_PAYLOAD_MAPS_CACHE_H */
