/* fill.h - what the cli reads from /proc itself when the agent could not:
 * a process out of file descriptors cannot open its own maps or statm,
 * so its snapshot comes without them. */
#ifndef HI_CLI_LINK_FILL_H
#define HI_CLI_LINK_FILL_H

#include <sys/types.h>

#include "cli/profile/profile.h"

/* Fills p's maps text (needed to symbolize) and RSS from the live process
 * pid when the snapshot has none. Returns a short note of what was filled
 * in ("" when nothing), static storage. */
const char *cli_fill_from_proc(pid_t pid, struct cli_profile *p);

#endif /* HI_CLI_LINK_FILL_H */
