/* unit.h - a systemd unit's cgroup, found without systemctl (--unit NAME;
 * issue 28).
 *
 * systemd puts every unit's processes in a cgroup v2 directory named after
 * the unit, under its slice: system.slice/nginx.service, and for a user's
 * units user.slice/user-1000.slice/user@1000.service/app.slice/x.service.
 * The v2 hierarchy is walked for a directory named NAME, or NAME.service
 * when NAME has no unit suffix, in any slice. No D-Bus, no systemctl: a
 * container or a minimal host without them works the same. */
#ifndef HI_CLI_SESSION_UNIT_H
#define HI_CLI_SESSION_UNIT_H

#include <stddef.h>

/* The cgroup v2 directory of unit name, absolute, into path. 0, or an
 * enum cli_exit with the reason said on stderr: CLI_EXIT_NOPROC when no
 * directory matches (or there is no v2 hierarchy), CLI_EXIT_USAGE when
 * several do (each listed: give --cgroup PATH) or name is no unit name. */
int cli_unit_cgroup(const char *name, char *path, size_t len);

#endif /* HI_CLI_SESSION_UNIT_H */
