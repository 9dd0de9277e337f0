/* debughint.h - what to install so that a module's frames get file:line.
 *
 * A frame of a module without debug information shows a bare function or
 * "+0x..." offset, and nothing told the user that Debian's debug packages
 * (PKG-dbgsym in the debian-debug archive, libc6-dbg for glibc), a debug
 * file under /usr/lib/debug/.build-id, or a debuginfod server would name
 * it (issue 16). The symbolizer records such modules once each
 * (struct cli_debug_hint in cli/profile/profile.h); reports print one line
 * per module from cli_debughint_line.
 */
#ifndef HI_CLI_SYMBOLIZE_DEBUGHINT_H
#define HI_CLI_SYMBOLIZE_DEBUGHINT_H

#include <stddef.h>

#include "cli/profile/profile.h"

/* The Debian binary package that owns path ("libstdc++6"), asked of
 * dpkg-query -S (with and without the /usr prefix: merged-/usr systems
 * list libc under /lib); NULL when no package owns it, dpkg is missing, or
 * on failure. Paths outside Debian's package paths (/usr but /usr/local,
 * /lib*, /bin, /sbin) are not asked: NULL. Runs dpkg-query without a
 * shell: path comes from the target. Malloc'ed. */
char *cli_debughint_package(const char *path);

/* The package of hint h: h->package, else (h->ask_path set) what
 * cli_debughint_package says of h->ask_path, asked the first time a hint
 * of that file is printed and remembered for the cli's life. NULL: none. */
const char *cli_debughint_package_of(const struct cli_debug_hint *h);

/* The packages of hints, and which debug package apt has for each, looked
 * up at once before hints are printed (one dpkg-query call for all the
 * paths not asked yet, one apt-cache call for all the packages). */
void cli_debughint_prefetch(const struct cli_debug_hint *hints, size_t n);

/* The debug package to install for package ("libc6-dbg" for libc6, else
 * "PKG-dbgsym"), written to buf. */
const char *cli_debughint_debug_package(const char *package, char *buf, size_t len);

/* Whether apt's sources (apt_dir/sources.list and sources.list.d/ (*.list
 * and *.sources); apt_dir NULL: /etc/apt) include Debian's debug archive
 * (debian-debug), where every -dbgsym package is: 1 yes, 0 no, -1 no apt. */
int cli_debughint_debug_archive(const char *apt_dir);

/* The build-id path where libdw looks for the debug file
 * (/usr/lib/debug/.build-id/xx/rest.debug), written to buf; "" without a
 * build id. */
const char *cli_debughint_debug_file(const char *build_id, char *buf, size_t len);

/* One line for the report, without the module name or newline: "install
 * libc6-dbg, or put the debug file at ..., or set DEBUGINFOD_URLS". */
const char *cli_debughint_line(const struct cli_debug_hint *h, char *buf, size_t len);

#endif /* HI_CLI_SYMBOLIZE_DEBUGHINT_H */
