/* census_uncopied.h - roots in memory the census's fork does not copy.
 *
 * A mapping marked MADV_DONTFORK ("dc" in smaps' VmFlags) is absent from
 * the copy, one marked MADV_WIPEONFORK ("wf") reads as zeros there. V8
 * marks its whole heap and code space so (node: 23 mappings): the pointers
 * its objects hold to malloc'ed blocks (slot sets, external strings,
 * embedder data) were invisible, and a census of a node process that had
 * run for 20 minutes called 384 live blocks unreachable (LeakSanitizer's
 * reasoning, valgrind's leak check: none lost).
 *
 * So the agent reads those mappings itself, in the running process, right
 * after the fork (the program's threads run again: no stall is added), and
 * hands the child every word that points into memory the copy has (a
 * copied anonymous writable mapping: where heap blocks live). The child
 * marks from those words as from any other anonymous mapping, one root per
 * mapping. Read a few ms after the fork, they may differ from what the
 * copy would have held: a pointer stored there since keeps its block, one
 * removed since does not free it.
 *
 * Reading uses process_vm_readv on our own process (a mapping unmapped
 * meanwhile answers EFAULT, never a fault) and only pages the pagemap
 * shows present or swapped (no page of the program is populated by us). */
#ifndef HI_PAYLOAD_CENSUS_UNCOPIED_H
#define HI_PAYLOAD_CENSUS_UNCOPIED_H

#include <stdint.h>

#include "payload/census/types.h"

#define PL_UNCOPIED_MAX_MAPS 4096u
#define PL_UNCOPIED_BYTES (64ull << 20) /* the shared area, MAP_NORESERVE */

struct pl_uncopied_map {
    uintptr_t lo, hi;       /* the mapping */
    uint64_t first, count;  /* its words in values[] */
    uint64_t read_bytes;    /* bytes of it read (present or swapped pages) */
    uint64_t unread_bytes;  /* present, but unmapped or unreadable when read */
};

/* Shared (MAP_SHARED) between the agent, which fills it after the fork,
 * and the child, which waits for `done` before it marks from it. */
struct pl_uncopied {
    volatile uint32_t done;      /* 1: the agent finished (or gave up) */
    uint32_t n_maps;             /* maps[] complete so far (release order) */
    uint64_t total_bytes;        /* all uncopied readable mappings; those not
                                    in maps[] when done were not read */
    uint64_t n_values, max_values;
    struct pl_uncopied_map maps[PL_UNCOPIED_MAX_MAPS];
    uintptr_t values[];          /* to the end of PL_UNCOPIED_BYTES */
};

/* Before the fork (agent thread): the shared area, or NULL (then the
 * census goes on without these roots and says so: missed = total). */
struct pl_uncopied *pl_uncopied_create(void);
void pl_uncopied_destroy(struct pl_uncopied *u);

/* After the fork, in the process (agent thread): finds the uncopied
 * mappings (smaps' VmFlags dc / wf), reads them, keeps the words that
 * point into copied anonymous writable memory, sets done. Skips the
 * ranges in exclude (the profiler's own). Stops at deadline_ns
 * (pl_now_ns clock). */
void pl_uncopied_scan(struct pl_uncopied *u, const struct pl_census_range *exclude, unsigned n_exclude,
                      uint64_t deadline_ns);

#endif /* HI_PAYLOAD_CENSUS_UNCOPIED_H */
