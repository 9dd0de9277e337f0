/* debugpkg.h - a debug package in the main archive that apt knows. */
#ifndef HI_CLI_SYMBOLIZE_DEBUGPKG_H
#define HI_CLI_SYMBOLIZE_DEBUGPKG_H

#include <stdbool.h>
#include <stddef.h>

/* Debian's -dbgsym packages live only in the debug archive, which apt
 * lists only when told; some packages have a -dbg package in the main
 * archive that holds the same debug information (python3.11-dbg for the
 * interpreter in python3.11-minimal). For package, the first of
 * "PKG-dbg" and, for "X-minimal", "X-dbg" that apt knows (apt-cache
 * show), written to buf: true; false when apt knows neither (or there is
 * no apt-cache). Answers are cached per package. */
bool cli_debugpkg_main_dbg(const char *package, char *buf, size_t len);

/* Asks apt about all of packages at once (NULLs skipped), so that the
 * cli_debugpkg_main_dbg of each then answers from the cache: apt-cache
 * costs the same for one name as for thirty. */
void cli_debugpkg_prefetch(const char *const *packages, size_t n);

#endif /* HI_CLI_SYMBOLIZE_DEBUGPKG_H */
