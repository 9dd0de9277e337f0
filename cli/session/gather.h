/* gather.h - one report of every process of a session: one snapshot
 * request fanned out to all at once, each code layout symbolized once for
 * all the processes that share it, the profiles merged with each stack's
 * pid (cli/profile/merge.h; issue 28). */
#ifndef HI_CLI_SESSION_GATHER_H
#define HI_CLI_SESSION_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "cli/profile/profile.h"
#include "cli/session/session.h"

struct cli_gather_stats {
    size_t asked, taken;     /* targets asked for a snapshot, snapshots received */
    size_t ended;            /* processes that exited during the session, in the
                                report by the snapshot they left (cli_session_take_last) */
    double spread_ms;        /* latest minus earliest snapshot time (the agents' clock) */
    double snapshot_ms;      /* wall time of the fanned-out requests */
    size_t layouts;          /* symbolizer runs: distinct code layouts */
    double symbolize_ms;     /* wall time of all of them */
    char unreadable[256];    /* a module without symbols, "" when none */
    unsigned nunreadable;
};

/* Snapshots every LINKED target of s at once (CLI_SESSION_PARALLEL at a
 * time), completes each from /proc (cli/link/fill.h), names each process
 * (comm, parent, attach_ms of its target), symbolizes and merges them into
 * *out (free with cli_profile_free). A target whose snapshot failed is
 * said on stderr and closed (cli_session_request_failed) and the others
 * go on. 0, -ENOENT when no snapshot came, or -ENOMEM. */
int cli_session_gather(struct cli_session *s, struct cli_profile *out, struct cli_gather_stats *st);

#endif /* HI_CLI_SESSION_GATHER_H */
