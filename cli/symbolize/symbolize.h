/* symbolize.h - program counters to functions, files and lines (elfutils libdw).
 *
 * The module layout comes from the maps text of the snapshot itself (the
 * target's /proc/self/maps at snapshot time), so a profile symbolizes the
 * same whether the target still runs, has loaded more libraries since, or
 * has exited. Files are opened as the target sees them, through
 * /proc/PID/root while it lives (another mount namespace, chroot), else by
 * their path when the target shared the cli's namespace. A module whose file
 * was deleted or replaced since it was mapped is read through
 * /proc/PID/map_files when permitted; otherwise its frames keep their
 * addresses and carry the module name with " (deleted)" or " (replaced)".
 * A PC in memory that is no file gets the module "[jit]" (anonymous and
 * executable: a JIT compiler's code), "[anon]" or "[vdso]", and its offset
 * into that mapping; a second mapping of a loaded file at another address
 * (V8's remapped builtins) is symbolized as the same code in the file.
 */
#ifndef HI_CLI_SYMBOLIZE_H
#define HI_CLI_SYMBOLIZE_H

#include <stdbool.h>
#include <sys/types.h>

#include "cli/profile/profile.h"

struct cli_symbolizer;

/* A symbolizer for the target pid (0: no live process, files by path only).
 * same_mntns: the target shares the cli's mount namespace (1), does not (0)
 * or unknown (-1); decides whether a path may be opened in the cli's own
 * root when /proc/PID/root is gone. NULL with errno on failure. */
struct cli_symbolizer *cli_symbolizer_new(pid_t pid, int same_mntns);

/* Fills p->stacks[*].frames from p->maps, replacing any frames there, and
 * drops heapinject's own frames (the payload's hooks and sampler) from
 * frames and pcs. Sets p->debug_hints to the modules of the stacks that
 * have no debug information (cli/symbolize/debughint.h; the owning
 * package is asked of dpkg once per module and symbolizer). Modules and addresses are cached across calls as long as
 * the maps text stays the same. 0 or -errno (-ENOMEM; a PC that cannot be
 * symbolized is not an error: its frame keeps the address). */
int cli_symbolizer_run(struct cli_symbolizer *s, struct cli_profile *p);

/* Number of modules whose file could not be read (deleted, replaced, gone,
 * no permission) among those hit by the last run, and the first one's name. */
unsigned cli_symbolizer_unreadable(const struct cli_symbolizer *s, const char **first);

void cli_symbolizer_free(struct cli_symbolizer *s);

#endif /* HI_CLI_SYMBOLIZE_H */
