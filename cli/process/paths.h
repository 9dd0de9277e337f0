/* paths.h - where the cli finds the payload and the agent's control socket. */
#ifndef HI_CLI_PATHS_H
#define HI_CLI_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include "common/config.h"

/* The control socket of the agent in one target. */
struct cli_sock_path {
    char target[HI_SOCK_PATH_MAX + 1];          /* as the target sees it: goes
                                                   into the start config */
    char local[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* as the cli
                                                   reaches it: through
                                                   /proc/PID/root when the
                                                   target has another mount
                                                   namespace */
};

/* Whether a module path (as /proc/PID/maps or a profile names it; len
 * bytes, not necessarily NUL-terminated) is heapinject's own payload:
 * ".../libheapinject.so", also "/memfd:libheapinject.so (deleted)" when
 * it was injected from a memfd, and " (deleted)" after a reinstall. The
 * one check every part of the cli uses. */
bool cli_paths_is_payload(const char *path, size_t len);

/* Finds libheapinject.so: $HEAPINJECT_PAYLOAD, else libheapinject.so beside
 * the heapinject executable, else ../lib/heapinject/libheapinject.so
 * relative to it. Writes the path into buf. Returns 0, or -ENOENT with the
 * places tried written into tried (for the error message). */
int cli_paths_payload(char *buf, size_t len, char *tried, size_t triedlen);

/* Where a new agent in pid should put its socket: /run/user/<uid>/heapinject/
 * <pid>.sock when the target's user has a runtime directory in the target's
 * root, else /tmp/heapinject-<uid>/<pid>.sock (uid = the target's). Returns
 * 0 or -errno (-ENAMETOOLONG when the path does not fit a socket address). */
int cli_paths_socket_new(pid_t pid, struct cli_sock_path *out);

/* The places where an agent already running in pid may have its socket,
 * the one cli_paths_socket_new() would choose first. A process whose fork
 * was followed got its socket where its parent's was, as the user it was
 * then: a worker that changed user after the fork (nginx's, as nobody,
 * forked by a root master) has it in that user's directory, so when the
 * cli runs as another user than the target, its own user's places are
 * candidates too. Returns how many (1-CLI_SOCKET_CANDIDATES) or -errno. */
#define CLI_SOCKET_CANDIDATES 4
int cli_paths_socket_candidates(pid_t pid, struct cli_sock_path out[CLI_SOCKET_CANDIDATES]);

/* Removes the sockets of agents whose process is gone from the directory
 * of sock (a killed target leaves its socket behind): only files named
 * <pid>.sock that are sockets owned by the directory's owner, whose pid
 * does not exist and on which nobody listens (ECONNREFUSED); and
 * <pid>.last files of processes
 * gone, older than HI_LAST_KEEP_S (common/last_snapshot.h), and their
 * half-written <pid>.last.tmp. Only when the
 * target shares the cli's mount and pid namespaces (a pid in the name
 * means the same process to both). Returns how many were removed. */
int cli_paths_clean_stale(pid_t target, const struct cli_sock_path *sock);

/* Whether the last snapshot at path (st: its lstat) is whole: its header's
 * length, written last, matches the file (common/last_snapshot.h). */
int cli_paths_last_whole(const char *path, const struct stat *st);

/* Basename of a path (pointer into it). */
const char *cli_paths_basename(const char *path); /* NULL stays NULL */

#endif /* HI_CLI_PATHS_H */
