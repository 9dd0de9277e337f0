/* allocstats.h - the allocator's own figures and its trim call, reached
 * through the functions the allocator exports (agent thread only).
 *
 * Which allocator: the one the patched malloc slots forward to (the
 * family table, payload/interpose/family.h), else the first module in load order
 * that defines malloc (the one an unpatched slot binds to). Its symbols are
 * looked up in that module's dynamic symbol table (payload/sys/dynelf.h), not
 * with dlsym, which can allocate for its error string.
 *
 * Never from a hook (except jemalloc's figures, handed off: below): mallinfo2 and malloc_trim lock each glibc arena in
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

/* The same, for the agent while a session runs: jemalloc's figures are
 * read by a thread of the process instead, in its next malloc or free
 * through a hooked slot (pl_allocstats_serve), the agent waiting up to
 * 1 s. jemalloc gives any thread's first call (mallctl included: its
 * tsd_fetch sets up the thread's tcache, which chooses an arena) an arena
 * of its own while it has arenas to spare, and with background_thread on,
 * a background thread for it that stays for good: on the agent thread, a
 * thread more in the process after detach. A thread of the process has its
 * arena already. No thread calling malloc or free in time (an idle
 * process), hooks off: read on the agent thread after all (at most one
 * arena a process: see allocstats.c). Other allocators:
 * pl_allocstats_read. */
void pl_allocstats_read_live(struct hi_alloc_stats *s);

/* From the hooks' malloc and free slow paths (never from mmap's, which
 * may run inside the allocator): a pending hand-off is taken by the first
 * thread to get here. At that point the thread is in the program's own
 * code, between its calls to the allocator, and holds none of jemalloc's
 * locks; mallctl here is the call the program could make itself
 * (redis-server makes it on its main thread for INFO memory). Not
 * excluded: a thread inside mallctl whose call reaches a hooked malloc
 * (prof.dump's unwinder, say) would wait for ctl_mtx, which it holds. */
extern int pl_allocstats_handoff __attribute__((visibility("hidden")));
void pl_allocstats_serve(void);

/* Asks the allocator to return its free memory to the kernel: glibc
 * malloc_trim(0), jemalloc mallctl("arena.4096.purge"), tcmalloc
 * MallocExtension_ReleaseFreeMemory(), mimalloc mi_collect(true). An
 * allocator without such a call is left alone: status -ENOTSUP. */
void pl_allocstats_trim(struct hi_trim_done *t);

#endif /* HI_PAYLOAD_ALLOCSTATS_H */
