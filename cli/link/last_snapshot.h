/* last_snapshot.h - the snapshot a process attached with `heapinject
 * attach` left when it ended (common/last_snapshot.h, issue 28). */
#ifndef HI_CLI_LAST_SNAPSHOT_H
#define HI_CLI_LAST_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli/profile/profile.h"

/* When pid has ended (gone, or a zombie) and left PID.last in one of our
 * socket directories: reads it into p (owned by the caller), writes into
 * note a line that says when and how it ended, and into path the file's
 * name (the caller removes it once the report is written). Returns 1 then,
 * 0 when there is none (or the process runs, or the file is of an earlier
 * process that had the same pid), or a negative errno with a message on
 * stderr (the file is there but unreadable or corrupt). */
int cli_last_snapshot_take(pid_t pid, struct cli_profile *p, char *note, size_t notelen, char *path,
                           size_t pathlen);

/* cli_last_snapshot_take, and how it ended into *x (status_known, signal
 * or exit_code, at_exit, at_unix_s) when it returns 1. sock, when not
 * NULL, is the socket its profiler was reached on: the file is looked for
 * next to it first. */
int cli_last_snapshot_take_exit(pid_t pid, struct cli_profile *p, char *note, size_t notelen, char *path,
                                size_t pathlen, struct cli_target_exit *x, const char *sock);

/* A last snapshot found in a socket directory. */
struct cli_last_entry {
    pid_t pid, ppid;         /* ppid: its parent as it ended */
    char sock[4096];         /* where its socket was: the file is next to it */
};

/* The last snapshots in dir (one of our socket directories) of processes
 * that are gone or zombies, their headers only (at most cap, into out).
 * Their count. */
size_t cli_last_snapshot_scan(const char *dir, struct cli_last_entry *out, size_t cap);

/* A socket at path (as the cli reaches it) that refused the connection,
 * of a process that runs with no profiler mapped: a followed fork child
 * (or any profiled process) that exec'd, which nothing of ours survives.
 * Removes it and says so (unless quiet). Returns 1 if removed, else 0. */
int cli_left_socket_remove(pid_t pid, const char *path, bool quiet);

/* After a detach the agent acknowledged and hung up on: waits (at most
 * 1 s) until its socket at path is gone, as the agent removes it. One it
 * cannot remove, ours and refusing connections, is removed here: a worker
 * that changed user after its fork was followed (nginx's, nobody under a
 * root master) has its socket in its parent's user's directory, where it
 * may no longer write. Its PID.last.tmp, opened at its start and never
 * written (payload/serve/last_keep.h), goes too. Returns 1 if the socket
 * was removed here, else 0. */
int cli_socket_wait_gone(const char *path);

#endif /* HI_CLI_LAST_SNAPSHOT_H */
