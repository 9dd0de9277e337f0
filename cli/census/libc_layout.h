/* libc_layout.h - glibc's struct malloc_state and main_arena's address in
 * a process, from libc's debug information (libdw). See libc_layout.c. */
#ifndef HI_CLI_CENSUS_LIBC_LAYOUT_H
#define HI_CLI_CENSUS_LIBC_LAYOUT_H

#include <stddef.h>
#include <sys/types.h>

#include "common/proto.h"

/* 0 with l filled and where naming the debug file, or -errno with where
 * saying what is missing (and what to install). */
int cli_census_libc_layout(pid_t pid, struct hi_census_layout *l, char *where, size_t wlen);

/* The same, with pid's maps already read (one read less per attach). */
struct inj_maps;
int cli_census_libc_layout_in(pid_t pid, const struct inj_maps *maps, struct hi_census_layout *l, char *where,
                              size_t wlen);

#endif /* HI_CLI_CENSUS_LIBC_LAYOUT_H */
