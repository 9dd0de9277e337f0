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

#include <stddef.h>
#include <stdint.h>

/* Maps `bytes` (rounded up to pages) of zeroed read-write memory. Returns
 * NULL with errno set on failure. Never unmapped. */
void *pl_arena_map(size_t bytes);

/* Zeroes [p, p+bytes) (whole pages from pl_arena_map) and drops the pages
 * from RSS. */
void pl_arena_clear(void *p, size_t bytes);

/* Bytes of the arena really in memory (pagemap; mincore as a fallback).
 * Agent thread only. */
uint64_t pl_arena_resident_bytes(void);

/* The arena's mappings, for the census to leave out: up to max [lo, hi)
 * pairs into lo[]/hi[]; returns how many. */
unsigned pl_arena_ranges(uintptr_t *lo, uintptr_t *hi, unsigned max);

#endif /* HI_PAYLOAD_ARENA_H */
