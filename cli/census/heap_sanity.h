/* heap_sanity.h - is the target's heap in a state the injection's own
 * malloc calls would trip on? Read from outside before anything is loaded
 * (issue 25, item 8). */
#ifndef HI_CLI_CENSUS_HEAP_SANITY_H
#define HI_CLI_CENSUS_HEAP_SANITY_H

#include <stddef.h>
#include <sys/types.h>

/* Walks main_arena's fastbins and unsorted bin and the main thread's
 * tcache through /proc/PID/mem (main_arena from libc's debug information,
 * cli/census/libc_layout.c): a cycle, a misaligned or out-of-heap link, a
 * chunk whose size does not fit its bin, a broken back link. Returns 1
 * when nothing is wrong (or a finding did not repeat: the process runs
 * while we read), 0 with why filled (the same finding three times) ("the fastbin of 32-byte
 * chunks ...") when malloc would abort on it, -errno when it cannot tell
 * (no debug information for libc, memory unreadable). */
int cli_heap_sanity_check(pid_t pid, char *why, size_t len);

/* The same, its first look with pid's maps already read (one read less
 * per attach); a finding is looked at again with fresh maps. */
struct inj_maps;
int cli_heap_sanity_check_in(pid_t pid, const struct inj_maps *maps, char *why, size_t len);

/* One look and no second: what the first look of cli_heap_sanity_check
 * finds. The tests count how often one look at a heap that changes under
 * it says "corrupt" (never, since a finding is read twice). */
int cli_heap_sanity_look(pid_t pid, char *why, size_t len);

#endif /* HI_CLI_CENSUS_HEAP_SANITY_H */
