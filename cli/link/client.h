/* client.h - the cli's side of the wire protocol (common/proto.h).
 *
 * A client is one connection to the agent inside a target. Every message
 * the agent sends is checked against the protocol's framing and bounds
 * before it is used: a garbage, truncated, oversized or out-of-order reply
 * is an error (-EPROTO with a message), never a crash or an unbounded
 * allocation. TICK messages pushed by the agent after WATCH are collected
 * whenever the client reads, also in the middle of another answer.
 *
 * Not thread-safe: one thread uses a client at a time.
 */
#ifndef HI_CLI_CLIENT_H
#define HI_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/profile/profile.h"
#include "common/proto.h"

#define CLI_CLIENT_TIMEOUT_MS 10000
#define CLI_CLIENT_RBUF (1u << 20)
/* Hard bounds on what the agent sends. The socket may be served by
 * something else (the target's user can bind it), and a cli running as
 * root must not grow without bound on its word: each bound is about twice
 * what a real agent can send (payload/bucket.h: 2^18 stacks and 8 Mi
 * frames in all, about 110 MiB on the wire; payload/thread.h: 4096
 * threads; census_types.h: 32 MiB of census records), so that a peer
 * past one is refused with a message that names the bound. */
#define CLI_CLIENT_MAX_BUCKETS (1u << 19)
#define CLI_CLIENT_MAX_THREADS (1u << 16)
#define CLI_CLIENT_MAX_SNAPSHOT_BYTES (192u << 20) /* all records of one snapshot */
#define CLI_CLIENT_MAX_MAPS (64u << 20)            /* bytes of maps text */
#define CLI_CLIENT_MAX_MAPS_LINES (1u << 20)       /* vm.max_map_count is 65530 by default */
#define CLI_CLIENT_MAX_MAPS_LINE 8192u             /* PATH_MAX and the fields before it */
#define CLI_CLIENT_MAX_CENSUS_BYTES (64u << 20)    /* all records of one census */
/* Ticks kept in memory (about 15 MB; 9 hours at 500 ms): past it, each two
 * neighbours become one and later ticks are kept grouped as many a tick
 * (cli_client_store_tick), so a session of any length is bounded. */
#define CLI_CLIENT_MAX_TICKS (1u << 16)

struct cli_client {
    int fd;                  /* -1 when closed */
    bool broken;             /* a protocol error happened: fd is useless */
    struct hi_hello hello;   /* the agent's HELLO (valid after hello()) */
    int timeout_ms;          /* bound on waiting for one message */
    uint8_t *buf;            /* body of the last message (HI_MAX_RECORD_BODY) */
    /* What was read from the socket and not yet parsed: one read takes up
     * to CLI_CLIENT_RBUF bytes (a snapshot of 100,000 stacks is 200,000
     * messages: two reads and two polls each made it 0.7 s of system
     * time). */
    uint8_t *rbuf;
    size_t rpos, rlen;

    /* Ticks received so far (after WATCH), in arrival order. */
    struct cli_tick *ticks;
    size_t nticks, cap_ticks;
    uint32_t tick_group;     /* agent ticks a kept tick stands for (1, then
                                doubled each time the cap is reached; 0: 1) */
    uint32_t npending;       /* ticks of the group not yet complete */
    struct cli_tick pending; /* their fold (kept once complete) */
    struct hi_tick last_tick;/* the newest TICK as sent */
    uint64_t tick_count;     /* TICK messages received (also past the cap) */

    /* The newest snapshot the agent pushed by itself (SNAP_PUSH: a fatal
     * signal, memory pressure) and not yet taken; NULL if none. */
    struct cli_pushed *pushed;
    uint64_t push_count;     /* SNAP_PUSH snapshots received whole */
    bool in_push;            /* reading one: another inside is refused */

    int remote_code;         /* code of the agent's last ERROR message, 0 if none */
    char error[256];         /* what went wrong, for the user */
};

/* A snapshot the agent pushed, and why (common/proto.h SNAP_PUSH). */
struct cli_pushed {
    struct hi_snap_push why;
    struct cli_profile p;
};

/* Prepares an unconnected client. */
void cli_client_init(struct cli_client *c);

/* Connects to the agent's socket at path. When expect_pid > 0, the socket
 * must be served by that process (SO_PEERCRED), so that a stale or foreign
 * socket at the same path is not mistaken for the agent. Returns 0 or
 * -errno: -ENOENT or -ECONNREFUSED (no agent), -EACCES/-EPERM (not allowed),
 * -ESRCH (served by another process); c->error says which. */
int cli_client_connect(struct cli_client *c, const char *path, pid_t expect_pid);

/* Uses an already connected socket (tests: a socketpair). Takes fd over. */
int cli_client_use_fd(struct cli_client *c, int fd);

/* Exchanges HELLO; fills c->hello. 0 or -errno. */
int cli_client_hello(struct cli_client *c);

/* Requests answered by an ACK. 0 or -errno. */
int cli_client_set_rate(struct cli_client *c, uint64_t rate);
int cli_client_watch(struct cli_client *c);
int cli_client_own_session(struct cli_client *c);
/* Asks the agent to detach and waits for its ACK (the agent then closes). */
int cli_client_detach(struct cli_client *c);

/* After a DETACH: waits up to timeout_ms for the agent to close the
 * connection, which it does once its hooks are removed. Messages still in
 * flight (ticks) are read and dropped. 0 when closed, -ETIMEDOUT, -errno. */
int cli_client_wait_closed(struct cli_client *c, int timeout_ms);

/* Takes a snapshot into p (zeroed first; owned by the caller, release with
 * cli_profile_free()). Ticks are not copied into p. 0 or -errno; on error
 * p is left empty. */
int cli_client_snapshot(struct cli_client *c, struct cli_profile *p);

/* Reads one snapshot (SNAP_BEGIN ... SNAP_END) the agent already wrote,
 * without asking: a last snapshot file (cli/link/last_snapshot.c). As
 * cli_client_snapshot otherwise. */
int cli_client_read_snapshot(struct cli_client *c, struct cli_profile *p);

/* Asks the agent for the allocator's own figures (ALLOC_STATS). 0 or
 * -errno; st->status says whether the allocator could be read. */
int cli_client_alloc_stats(struct cli_client *c, struct hi_alloc_stats *st);

/* Asks the agent to make the allocator give free memory back (TRIM_REQ);
 * fills t with what was done and after with the figures that follow. 0 or
 * -errno (the call's own result is t->status). */
int cli_client_trim(struct cli_client *c, struct hi_trim_done *t, struct hi_alloc_stats *after);

/* Waits up to timeout_ms (0: only what is already there) for messages
 * pushed by the agent and reads ONE. Returns 1 when a TICK was read, 2 when
 * a pushed snapshot was (cli_client_take_pushed), 0 on timeout,
 * -ECONNRESET when the agent closed the connection, other -errno on
 * errors. */
int cli_client_pump(struct cli_client *c, int timeout_ms);

/* Moves the newest snapshot the agent pushed by itself (read by any call
 * above) into p (the caller's, cli_profile_free) and its reason into why.
 * false when there is none. */
bool cli_client_take_pushed(struct cli_client *c, struct cli_profile *p, struct hi_snap_push *why);

/* Copies the ticks collected so far into p->ticks (replacing them), the
 * group not yet complete as the last. 0 or -ENOMEM. */
int cli_client_copy_ticks(const struct cli_client *c, struct cli_profile *p);

/* Seconds between attach and a CLOCK_MONOTONIC time of the target. */
double cli_client_since_attach(const struct cli_client *c, uint64_t now_ns);

/* Closes the connection and frees the client's memory. */
/* Asks for a census of the heap and receives its records into out (see
 * cli/census/census.h); waits up to timeout_ms for each message. 0 (the
 * census itself may have failed: out->end.status) or -errno. */
struct cli_census;
struct cli_census_hooks {
    /* READY came: hold the threads; the registers to send (n may be 0).
     * Returns how long FORKED may be waited for (ms; <= 0: fork_wait_ms) */
    int (*ready)(void *arg, int32_t agent_tid, const struct hi_census_regs **regs, size_t *n);
    /* FORKED came, or its wait passed without it (late): let them go */
    void (*forked)(void *arg, bool late);
    void *arg;
    int fork_wait_ms;
    const struct hi_census_layout *layout; /* PREP's body, or NULL */
};
/* hooks NULL: a plain REQ (no registers). Otherwise PREP first. */
int cli_client_census(struct cli_client *c, struct cli_census *out, int timeout_ms,
                      const struct cli_census_hooks *hooks);

void cli_client_close(struct cli_client *c);

#endif /* HI_CLI_CLIENT_H */
