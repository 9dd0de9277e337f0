/* allocstats.h - the allocator's own figures and its trim call, reached
 * through the functions the allocator exports (agent thread only).
 *
 * Which allocator: the one the patched malloc slots forward to (the
 * family table, payload/family.h), else the first module in load order
 * that defines malloc (the one an unpatched slot binds to). Its symbols are
 * looked up in that module's dynamic symbol table (payload/dynelf.h), not
 * with dlsym, which can allocate for its error string.
 *
 * Never from a hook: mallinfo2 and malloc_trim lock each glibc arena in
 * turn, mallctl("epoch") locks jemalloc's ctl mutex and each arena's stats
 * mutex, tcmalloc's calls take its page heap lock. A thread of the target
 * holds those only for the length of one malloc or free, so the agent
 * thread waits at most that long per lock. None of the calls allocates.
 */
#ifndef HI_PAYLOAD_ALLOCSTATS_H
#define HI_PAYLOAD_ALLOCSTATS_H

#include "common/proto.h"

/* Reads the allocator's figures into s (zeroed first). Always fills
 * s->allocator when the allocator is known, s->status < 0 and s->why when
 * its figures cannot be read. */
void pl_allocstats_read(struct hi_alloc_stats *s);

/* Asks the allocator to return its free memory to the kernel: glibc
 * malloc_trim(0), jemalloc mallctl("arena.4096.purge"), tcmalloc
 * MallocExtension_ReleaseFreeMemory(), mimalloc mi_collect(true). An
 * allocator without such a call is left alone: status -ENOTSUP. */
void pl_allocstats_trim(struct hi_trim_done *t);

#endif /* HI_PAYLOAD_ALLOCSTATS_H */
