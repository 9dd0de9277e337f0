/* snapshot.h - the agent's view of the tables as protocol records.
 *
 * Runs on the agent thread only; uses its own mmap'ed scratch, never the
 * heap. Records go out through a send function so this file knows nothing
 * about sockets.
 */
#ifndef HI_PAYLOAD_SNAPSHOT_H
#define HI_PAYLOAD_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/proto.h"
#include "payload/sys/sys.h"

/* Maps the scratch memory once. 0 or -ENOMEM. */
int pl_snapshot_init(void);

/* Totals since attach (threads, buckets, drops, payload memory). */
void pl_snapshot_totals(struct hi_totals *t);

/* Gives the agent's scratch pages back to the kernel (the session ended;
 * agent thread only). */
void pl_snapshot_release(void);

/* RSS of the process in bytes, from /proc/self/statm (0 if unreadable). */
uint64_t pl_rss_bytes(void);

/* Fills a TICK body. */
void pl_snapshot_tick(struct hi_tick *tick);

/* Streams SNAP_BEGIN, SNAP_THREAD*, SNAP_HIST, SNAP_BUCKET*, SNAP_MAPS*,
 * SNAP_END. 0 or the first send error. */
int pl_snapshot_send(pl_send_fn send, void *ctx);

/* The same for a SNAPSHOT_REQ whose body (req, len bytes; any length) may
 * be a hi_snapshot_req: with HI_SNAP_WANT_NODES the stacks go as
 * SNAP_NODES and SNAP_STACKS records, many to a record (issue 17: 476
 * bytes a stack on the socket as SNAP_BUCKETs with full PC lists). */
int pl_snapshot_send_req(pl_send_fn send, void *ctx, const void *req, uint32_t len);

/* Agent: the snapshots sent from now on carry text[0, len) as their maps
 * instead of reading /proc (a followed child's last snapshot:
 * maps_cache.h); NULL: read again. */
void pl_snapshot_maps_text(const char *text, size_t len);

/* Agent (or the one thread writing a last snapshot): true while the
 * snapshot being sent is the one a process leaves as it ends. Its
 * profiler's memory ends with it: payload_mem_bytes is 0, not counted
 * (a fork child's page tables made that count 0.1 ms of each followed
 * child's end; a report of several processes adds this figure up, and an
 * ended one holds none). */
void pl_snapshot_at_end(bool at_end);

#endif /* HI_PAYLOAD_SNAPSHOT_H */
