/* arena.h - the payload's own memory: anonymous mmap, never the hooked heap.
 *
 * Every table is one bounded mapping made once (MAP_NORESERVE: pages cost
 * nothing until touched). The arena remembers its mappings so the agent can
 * report how much of them is resident, and so a new session can give the
 * pages back (pl_arena_clear) instead of unmapping memory that a hook still
 * running from the previous session might touch.
 */
#ifndef HI_PAYLOAD_ARENA_H
#define HI_PAYLOAD_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Maps `bytes` (rounded up to pages) of zeroed read-write memory. Returns
 * NULL with errno set on failure. Never unmapped. */
void *pl_arena_map(size_t bytes);

/* The same for a table that every fork child empties in its fork handler
 * (pl_session_release_tables: buckets, live samples, sampled mappings,
 * snapshot scratch): MADV_WIPEONFORK, so that a fork copies none of its
 * page tables and pages, the child's release finds nothing to drop, and
 * its exit nothing to tear down (a followed child's fork + end cost ~130
 * us less in bench/fork_cost.py). A fork child reads these as zeros, which
 * every table reads as empty. */
void *pl_arena_map_child_empty(size_t bytes);

/* The census's copy of the process (a clone that reads the tables): keep
 * (true) makes the next forks copy those tables as they are, until called
 * with false. Agent thread. */
void pl_arena_keep_on_fork(bool keep);

/* Zeroes [p, p+bytes) (whole pages from pl_arena_map) and drops the pages
 * from RSS. */
void pl_arena_clear(void *p, size_t bytes);

/* Bytes of the arena really in memory (pagemap; mincore as a fallback).
 * Agent thread only. */
uint64_t pl_arena_resident_bytes(void);

/* Tests: no == 1 counts as on a kernel without PAGEMAP_SCAN (mincore
 * finds the holes), 0 as on one with it. */
void pl_arena_resident_no_scan(int no);

/* The arena's mappings, for the census to leave out: up to max [lo, hi)
 * pairs into lo[]/hi[]; returns how many. */
unsigned pl_arena_ranges(uintptr_t *lo, uintptr_t *hi, unsigned max);

/* The budget (issue 25, item 7): what the tables may still grow by, so
 * that the profiler never pushes the process over its memory cgroup's
 * limit. The tables claim their growth before they touch it (a new
 * bucket, its frames and counters; a chunk of live entries); at the cap
 * the claim fails and the sample is dropped (counted in
 * pl_arena_budget_dropped and in the session's dropped samples). The agent
 * sets the cap from the cgroup's room at attach and lowers it at every
 * pressure check when the room shrinks: the growth so far plus a share of the room
 * left then. No cap (0) without a limited cgroup. */
#define PL_ARENA_BUDGET_SHARE 4 /* the tables take at most 1/4 of the room left */

/* Claims bytes of growth: 0, or -1 at the cap. Lock-free, hook-safe. */
int pl_arena_claim(uint64_t bytes);

/* Gives back a claim of memory used for a while (a snapshot's tables). */
void pl_arena_unclaim(uint64_t bytes);

/* At attach: the cap becomes claimed-so-far + room / PL_ARENA_BUDGET_SHARE
 * (room: bytes left below the cgroup's limit; UINT64_MAX: no cap). At
 * each pressure check: the same figure when lower (the process grew), the
 * cap never raised. Agent thread. */
void pl_arena_budget_start(uint64_t room);
void pl_arena_budget_recheck(uint64_t room);

/* The cap now (0: none), growth claimed, samples dropped at the cap. */
uint64_t pl_arena_budget_cap(void);
uint64_t pl_arena_budget_claimed(void);
uint64_t pl_arena_budget_dropped(void);

/* Counts a sample dropped at the cap (the caller's claim failed). */
void pl_arena_budget_drop(void);

/* A new session: nothing claimed, nothing dropped (the cap stays). */
void pl_arena_budget_reset(void);

#endif /* HI_PAYLOAD_ARENA_H */
