/* aptlists.h - which package names apt's downloaded lists hold, read
 * from the lists themselves. */
#ifndef HI_CLI_SYMBOLIZE_APTLISTS_H
#define HI_CLI_SYMBOLIZE_APTLISTS_H

#include <stdbool.h>
#include <stddef.h>

/* Which of names (n of them) a "Package: NAME" record of apt's lists
 * (lists_dir/ *_Packages, plain, .gz or .lz4) or of dpkg's status file
 * names, in seen[]. This is what `apt-cache show` answers, without its
 * cost: with no binary cache (Debian's container images keep none)
 * apt-cache builds one in memory for every call, 1.4 s of CPU here and
 * up to 19 s at load 13, while these lists read in well under a second.
 * Returns 0 when every list was read; -1 (seen[] undefined) when there is
 * no list, one is compressed in a way not read here (.xz, .zst) or one
 * could not be read: the caller asks apt-cache then. lists_dir NULL:
 * /var/lib/apt/lists; status_file NULL: /var/lib/dpkg/status. */
int cli_aptlists_known(const char *lists_dir, const char *status_file, const char *const *names, size_t n,
                       bool *seen);

#endif /* HI_CLI_SYMBOLIZE_APTLISTS_H */
