/* memory_collect.h - the memory breakdown of a live process: the agent's
 * allocator figures over the link, smaps, and the notes. */
#ifndef HI_CLI_LINK_MEMORY_COLLECT_H
#define HI_CLI_LINK_MEMORY_COLLECT_H

#include <sys/types.h>

#include "cli/link/client.h"
#include "cli/memory/report.h"

/* Asks the agent for the allocator's figures (c may be NULL: not
 * attached), reads smaps and adds the notes. Returns a new cli_memory
 * (free with cli_memory_destroy) or NULL when smaps could not be read. */
struct cli_memory *cli_memory_collect(pid_t pid, struct cli_client *c, const struct cli_profile *p);

#endif /* HI_CLI_LINK_MEMORY_COLLECT_H */
