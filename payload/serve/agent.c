/* agent.c - the control socket server (agent side of common/proto.h). */
#include "payload/serve/agent.h"
#include "payload/serve/single_again.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "payload/sys/sys.h"
#include "payload/interpose/interpose.h"
#include "payload/census/census.h"
#include "payload/record/record.h"
#include "payload/serve/fatal.h"
#include "payload/serve/fork_follow.h"
#include "payload/serve/last_snapshot.h"
#include "payload/serve/maps_cache.h"
#include "common/last_snapshot.h"
#include "payload/python/python.h"
#include "payload/serve/pressure.h"
#include "payload/serve/proto_check.h"
#include "payload/serve/teardown.h"
#include "payload/serve/snapshot.h"
#include "payload/serve/sock.h"

#define HDR_SIZE ((uint32_t)sizeof(struct hi_msg_header))
#define MAX_MSGS_PER_ROUND 16

struct pl_client {
    int fd;                  /* -1: free */
    uint8_t hello, watch, owner;
    uint32_t push_flags;     /* WATCH's hi_snapshot_req.flags: what pushed snapshots carry */
    uint8_t tick_top;        /* WATCH asked for hi_tick_top after each TICK */
    uint64_t partial_since;  /* when its first byte came; 0 = between messages */
    struct pl_proto_rx rx;   /* the request being read */
};

/* Set up by pl_agent_listen (start lock), then owned by the agent thread. */
static struct {
    int listen_fd, wake_fd;
    int cli_fd;               /* pidfd of cfg.cli_pid until the session is owned; -1: none */
    struct hi_config cfg;
    struct pl_sock_id sock_id;
    int want_detach;
    int forked;               /* pl_agent_start's */
    int met_since_seal;       /* a client connected once sealed: a cli settled the gate (slots put back from outside) */
    struct pl_client c[PL_AGENT_MAX_CLIENTS];
} pl_agent = { .listen_fd = -1, .wake_fd = -1, .cli_fd = -1 };

/* ---- sending -------------------------------------------------------- */

/* Sends header+body within `timeout_ms`; a peer that does not read is not
 * allowed to hold the agent longer. 0 or -errno. */
static int send_timed(int fd, uint16_t type, const void *body, uint32_t len, int timeout_ms)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, len };
    struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
    size_t total = sizeof(h) + len, sent = 0;
    uint64_t deadline = pl_now_ns() + (uint64_t)timeout_ms * 1000000u;
    while (sent < total) {
        struct iovec v[2];
        int nv = 0;
        size_t skip = sent;
        for (int i = 0; i < 2; i++) {
            if (skip >= iov[i].iov_len) {
                skip -= iov[i].iov_len;
                continue;
            }
            v[nv].iov_base = (char *)iov[i].iov_base + skip;
            v[nv].iov_len = iov[i].iov_len - skip;
            skip = 0;
            nv++;
        }
        struct msghdr mh = { .msg_iov = v, .msg_iovlen = (size_t)nv };
        ssize_t r = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r > 0) {
            sent += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        uint64_t now = pl_now_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        struct pollfd p = { fd, POLLOUT, 0 };
        int ms = (int)((deadline - now) / 1000000u) + 1;
        if (poll(&p, 1, ms) < 0 && errno != EINTR)
            return -errno;
        if (p.revents & (POLLERR | POLLHUP))
            return -EPIPE;
    }
    return 0;
}

static int client_send(void *ctx, uint16_t type, const void *body, uint32_t len)
{
    struct pl_client *c = ctx;
    return send_timed(c->fd, type, body, len, PL_AGENT_SEND_TIMEOUT_MS);
}

static void close_client(struct pl_client *c)
{
    if (c->fd < 0)
        return;
    close(c->fd);
    /* The owner went away without DETACH (cli killed): detach now. */
    if (c->owner)
        pl_agent.want_detach = 1;
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

/* ERROR then close: best effort, a short wait at most. */
static void fail_client(struct pl_client *c, int code, const char *msg)
{
    struct hi_error e;
    memset(&e, 0, sizeof(e));
    e.code = code;
    size_t n = strlen(msg);
    memcpy(e.message, msg, n < sizeof(e.message) - 1 ? n : sizeof(e.message) - 1);
    send_timed(c->fd, HI_MSG_ERROR, &e, sizeof(e), 200);
    close_client(c);
}

static void send_or_drop(struct pl_client *c, uint16_t type, const void *body, uint32_t len)
{
    if (client_send(c, type, body, len) != 0)
        close_client(c);
}

static void ack(struct pl_client *c, uint16_t type)
{
    struct hi_ack a = { type };
    send_or_drop(c, HI_MSG_ACK, &a, sizeof(a));
}

/* ---- requests ------------------------------------------------------- */

static int owned(void)
{
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++)
        if (pl_agent.c[i].fd >= 0 && pl_agent.c[i].owner)
            return 1;
    return 0;
}

static void do_hello(struct pl_client *c)
{
    struct hi_hello h;
    memset(&h, 0, sizeof(h));
    h.version = HI_PROTO_VERSION;
    h.pid = (int32_t)getpid();
    h.rate = __atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED);
    h.attach_ns = pl_attach_ns;
    h.now_ns = pl_now_ns();
    h.ttl_ns = pl_agent.cfg.ttl_s * 1000000000ull;
    h.slots_patched = pl_modules_slots_patched();
    h.modules_patched = pl_modules_modules_patched();
    h.owned = (uint32_t)owned();
    h.tick_ms = pl_agent.cfg.tick_ms;
    c->hello = 1;
    send_or_drop(c, HI_MSG_HELLO, &h, sizeof(h));
}

#define SEALED_WHY "a seccomp filter was installed after attach: "

/* Acts on one whole request whose header passed pl_proto_check_header. */
static void dispatch(struct pl_client *c)
{
    struct hi_msg_header h;
    const char *why = "";
    memcpy(&h, c->rx.buf, HDR_SIZE);
    const unsigned char *body = c->rx.buf + HDR_SIZE;
    int err = pl_proto_check_request(&h, body, c->hello, &why);

    if (err) {
        fail_client(c, err, why);
        return;
    }
    switch (h.type) {
    case HI_MSG_HELLO:
        do_hello(c);
        break;
    case HI_MSG_SNAPSHOT_REQ:
        if (pl_snapshot_send_req(client_send, c, body, h.length) != 0)
            close_client(c);
        break;
    case HI_MSG_SET_RATE: {
        struct hi_set_rate r;
        memcpy(&r, body, sizeof(r));
        pl_session_set_rate(r.rate);
        ack(c, HI_MSG_SET_RATE);
        break;
    }
    case HI_MSG_WATCH:
        c->watch = 1;
        /* A body (hi_snapshot_req) asks pushed snapshots to carry what a
         * snapshot request with those flags would (Python frames); none:
         * an older cli's, native frames only. */
        c->push_flags = 0;
        if (h.length >= sizeof(uint32_t))
            memcpy(&c->push_flags, body, sizeof(uint32_t));
        c->tick_top = (c->push_flags & HI_WATCH_WANT_TICK_TOP) != 0;
        c->push_flags &= ~HI_WATCH_WANT_TICK_TOP; /* not a snapshot's flag */
        ack(c, HI_MSG_WATCH);
        break;
    case HI_MSG_DETACH:
        ack(c, HI_MSG_DETACH);
        c->owner = 0; /* a requested detach, not a lost owner */
        pl_agent.want_detach = 1;
        break;
    case HI_MSG_ALLOC_STATS_REQ: {
        struct hi_alloc_stats st;
        pl_allocstats_read_live(&st); /* jemalloc's: on a thread of the process */
        send_or_drop(c, HI_MSG_ALLOC_STATS, &st, sizeof(st));
        break;
    }
    case HI_MSG_TRIM_REQ: {
        if (pl_seccomp_sealed()) {
            fail_client(c, -EPERM, SEALED_WHY "no trim (malloc_trim gives pages back with madvise)");
            break;
        }
        /* The figures after the trim follow, so the cli sees what the
         * allocator kept. */
        struct hi_trim_done t;
        struct hi_alloc_stats st;
        pl_allocstats_trim(&t);
        send_or_drop(c, HI_MSG_TRIM_DONE, &t, sizeof(t));
        if (c->fd < 0)
            break;
        pl_allocstats_read(&st);
        send_or_drop(c, HI_MSG_ALLOC_STATS, &st, sizeof(st));
        break;
    }
    case HI_MSG_CENSUS_PREP: {
        struct hi_census_layout lay;
        if (pl_seccomp_sealed()) {
            fail_client(c, -EPERM, SEALED_WHY "no census (it reads /proc and makes a copy of the process)");
            break;
        }
        if (h.length >= sizeof(lay))
            memcpy(&lay, body, sizeof(lay));
        if (pl_census_prepare_send(client_send, c, h.length >= sizeof(lay) ? &lay : NULL, PL_AGENT_STACK_BYTES) != 0)
            close_client(c);
        break;
    }
    case HI_MSG_CENSUS_REGS: { /* a whole number of them (proto_check) */
        struct hi_census_regs r;
        for (uint32_t off = 0; off + sizeof(r) <= h.length; off += sizeof(r)) {
            memcpy(&r, body + off, sizeof(r));
            pl_census_add_regs(&r);
        }
        break;
    }
    case HI_MSG_CENSUS_REQ:
        if (pl_seccomp_sealed()) {
            fail_client(c, -EPERM, SEALED_WHY "no census");
            break;
        }
        /* Holds the agent for the census (seconds per GiB): ticks to
         * other clients pause meanwhile. */
        if (pl_census_send(client_send, c, c->fd, PL_AGENT_STACK_BYTES) != 0)
            close_client(c);
        break;
    case HI_MSG_OWN_SESSION:
        if (!c->owner && owned()) {
            fail_client(c, -EBUSY, "another client already owns this session");
            return;
        }
        c->owner = 1;
        {
            /* A fork child followed later watches this client as its cli. */
            struct ucred cred;
            socklen_t cl = sizeof(cred);
            pl_follow_set_owner(getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 ? cred.pid : 0);
        }
        /* Owned: from now on the owner's connection is what counts. */
        if (pl_agent.cli_fd >= 0) {
            close(pl_agent.cli_fd);
            pl_agent.cli_fd = -1;
        }
        ack(c, HI_MSG_OWN_SESSION);
        break;
    default:
        fail_client(c, -EPROTO, "unknown message type");
        break;
    }
}

/* A filter installed after attach: wait (making no call) for a cli's
 * verdict; with none that lets the agent serve, it sleeps for good. */
static void seccomp_look(void)
{
    if (pl_seccomp_watch_check() && !pl_seccomp_may(HI_GATE_SERVE))
        pl_seccomp_park();
}

/* Reads what the peer sent, one message at a time, dispatching each. */
static void client_readable(struct pl_client *c)
{
    for (int msgs = 0; c->fd >= 0 && msgs < MAX_MSGS_PER_ROUND;) {
        /* A filter may have come since the last look: before each
         * request, not only each round (a census takes seconds). */
        seccomp_look();
        uint32_t want = pl_proto_rx_want(&c->rx);
        ssize_t r = recv(c->fd, c->rx.buf + c->rx.have, want, MSG_DONTWAIT);
        if (r == 0) {
            close_client(c);
            return;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                close_client(c);
            return;
        }
        if (c->rx.have == 0)
            c->partial_since = pl_now_ns();
        const char *why = "";
        int v = pl_proto_rx_got(&c->rx, (uint32_t)r, &why);
        if (v < 0) {
            fail_client(c, v, why);
            return;
        }
        if (v == PL_RX_MESSAGE) {
            dispatch(c);
            if (c->fd < 0)
                return;
            pl_proto_rx_reset(&c->rx);
            c->partial_since = 0;
            msgs++;
        }
    }
}

static void accept_clients(void)
{
    for (;;) {
        int fd = accept4(pl_agent.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* out of descriptors: the listener stays readable, do not spin */
                struct timespec ts = { 0, 50000000 };
                nanosleep(&ts, NULL);
            }
            return;
        }
        struct pl_client tmp = { .fd = fd };
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 ||
            (cred.uid != 0 && cred.uid != geteuid())) {
            fail_client(&tmp, -EACCES, "permission denied: only root or the target's user may connect");
            continue;
        }
        struct pl_client *c = NULL;
        for (int i = 0; i < PL_AGENT_MAX_CLIENTS && !c; i++)
            if (pl_agent.c[i].fd < 0)
                c = &pl_agent.c[i];
        if (!c) {
            fail_client(&tmp, -EBUSY, "too many connections to this agent");
            continue;
        }
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        /* A cli settles the gate before it connects (cli/link/attach.c):
         * what the verdict does not let us put back, it has. */
        if (pl_seccomp_sealed())
            pl_agent.met_since_seal = 1;
    }
}

/* ---- the thread ----------------------------------------------------- */

static void tick(void)
{
    pl_bucket_tick();
    /* a TICK and, for a cli that asked, the tick's top risers after it */
    struct {
        struct hi_tick t;
        struct hi_tick_top top;
        struct hi_tick_kept kept;
    } msg;
    _Static_assert(sizeof(msg) == sizeof(struct hi_tick) + sizeof(struct hi_tick_top) + sizeof(struct hi_tick_kept),
                   "TICK trailer packed");
    int have = 0;
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++) {
        struct pl_client *c = &pl_agent.c[i];
        if (c->fd < 0 || !c->watch)
            continue;
        if (!have) {
            pl_snapshot_tick(&msg.t);
            pl_bucket_tick_top(&msg.top);
            pl_bucket_tick_kept(&msg.kept);
            have = 1;
        }
        send_or_drop(c, HI_MSG_TICK, &msg, c->tick_top ? sizeof(msg) : sizeof(msg.t));
    }
}

/* ---- snapshots nobody asked for (issue 16) -------------------------- */

/* The connection that owns the session and takes ticks: the one-shot
 * session's cli, the only client that gets SNAP_PUSH. */
static int push_receivers(void)
{
    int n = 0;
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++)
        n += pl_agent.c[i].fd >= 0 && pl_agent.c[i].owner && pl_agent.c[i].watch;
    return n;
}

/* SNAP_PUSH then a whole snapshot to every receiver. Returns how many got
 * it whole. */
static int push_snapshot(struct hi_snap_push *why)
{
    int sent = 0;
    why->now_ns = pl_now_ns();
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++) {
        struct pl_client *c = &pl_agent.c[i];
        if (c->fd < 0 || !c->owner || !c->watch)
            continue;
        struct hi_snapshot_req req = { c->push_flags, 0 };
        if (client_send(c, HI_MSG_SNAP_PUSH, why, sizeof(*why)) != 0 ||
            pl_snapshot_send_req(client_send, c, &req, sizeof(req)) != 0) {
            close_client(c);
            continue;
        }
        sent++;
    }
    return sent;
}

/* The process ends (last=1, last_snapshot.h): its snapshot into PID.last
 * and its socket removed, for the `snapshot` that finds it gone. The
 * listening descriptor stays open until the process is gone. */
static void last_words(unsigned how, int code)
{
    if (!pl_last_enabled())
        return;
    pl_last_write(how, code);
    pl_sock_unlink(pl_agent.cfg.sock, &pl_agent.sock_id);
}

/* A thread waits in exit(): its file first. */
static void serve_exit(void)
{
    int status;
    if (!pl_last_exit_pending(&status))
        return;
    last_words(HI_LAST_EXIT, status);
    pl_last_done();
}

/* A thread waits in the fatal signal handler: its snapshot first, then it
 * may die. */
static void serve_fatal(void)
{
    struct pl_fatal_event ev;
    if (!pl_fatal_pending(&ev))
        return;
    struct hi_snap_push why;
    memset(&why, 0, sizeof(why));
    why.reason = HI_PUSH_SIGNAL;
    why.signo = ev.signo;
    why.si_code = ev.si_code;
    why.tid = ev.tid;
    push_snapshot(&why);
    last_words(HI_LAST_SIGNAL, ev.signo);
    pl_fatal_done();
}

/* Every PL_PRESSURE_CHECK_MS: a snapshot when memory runs out, at most one
 * each PL_PRESSURE_EVERY_MS while it stays so, and less often when one
 * takes long (a process that stays near its limit must not spend the
 * agent's time on snapshots). *next_push: not before then. */
static void check_pressure(uint64_t now, uint64_t *next_push)
{
    struct pl_pressure pr;
    if (!pl_agent.cfg.pressure || !pl_seccomp_may(HI_GATE_PROC) || now < *next_push || !push_receivers() || !pl_pressure_check(&pr))
        return;
    struct hi_snap_push why;
    memset(&why, 0, sizeof(why));
    why.reason = HI_PUSH_PRESSURE;
    why.pressure_kind = pr.kind;
    why.usage_bytes = pr.usage;
    why.limit_bytes = pr.limit;
    push_snapshot(&why);
    uint64_t cost = pl_now_ns() - now, every = PL_PRESSURE_EVERY_MS * 1000000ull;
    *next_push = now + (cost * PL_PRESSURE_COST_SHARE > every ? cost * PL_PRESSURE_COST_SHARE : every);
}

/* A cli we watch through a pidfd is seen dying at once, so the time-to-live
 * of an unowned session only has to catch a live cli that never takes it:
 * give a loaded machine 10 s to get that cli from heapinject_start to
 * OWN_SESSION (2 s was seen running out in CI). Without a pidfd (another
 * pid namespace, no pidfd_open) the ttl is the safety net and stays as set. */
#define PL_AGENT_WATCHED_TTL_NS (10 * 1000000000ull)

static uint64_t unowned_ttl_ns(uint64_t ttl_ns)
{
    if (pl_agent.cli_fd >= 0 && ttl_ns < PL_AGENT_WATCHED_TTL_NS)
        return PL_AGENT_WATCHED_TTL_NS;
    return ttl_ns;
}

/* A seal (a seccomp filter after attach): the hooks become plain forwards
 * at once, no sample and no system call in any hook. */
static void hooks_off(void)
{
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
}

static void *agent_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pl_thread_mark_agent();
    pl_single_note_agent();
    /* Named by itself, not by its creator's pthread_setname_np (a write to
     * /proc/self/task/TID/comm: procmaps.h says what that costs a fork
     * child's end). */
    if (pl_agent.forked)
        pl_proc_own_start_forked("heapinject");
    else
        pl_proc_own_start("heapinject");
    pl_seccomp_watch_start(pl_modules_describe_slots, hooks_off, pl_agent.cfg.uffd != 0,
                           pl_agent.cfg.gate_known ? (int64_t)pl_agent.cfg.gate : -1, pl_agent.forked);
    pl_pymalloc_start(pl_agent.cfg.pymalloc != 0); /* a thread of ours takes the GIL: this does not wait for it */

    uint64_t tick_ns = (uint64_t)pl_agent.cfg.tick_ms * 1000000u;
    uint64_t ttl_ns = pl_agent.cfg.ttl_s * 1000000000ull;
    uint64_t now = pl_now_ns();
    uint64_t next_tick = now + tick_ns, next_mod = now + PL_AGENT_MODULE_CHECK_MS * 1000000ull;
    uint64_t next_pressure = now, next_pressure_push = 0, next_sweep = now;
    /* The cgroup's files serve the tables' budget too, snapshots or not. */
    pl_pressure_init(pl_agent.forked);
    pl_arena_budget_start(pl_pressure_room());
    /* Following: the maps text the children's last snapshots send (a
     * followed child's copy is its parent's: a look at the loader only). */
    if (pl_agent.cfg.follow)
        pl_maps_cache_refresh();

    while (pl_state_get() == PL_RUNNING) {
        pl_seccomp_agent_busy(true); /* not while a TSYNC filter goes in (seccomp_watch.h) */
        seccomp_look();
        pl_pymalloc_poll();
        pl_fatal_set_receiver((pl_agent.cfg.crash && push_receivers()) || pl_last_enabled());
        serve_fatal();
        serve_exit();
        now = pl_now_ns();
        if (now >= next_pressure) {
            pl_arena_budget_recheck(pl_pressure_room());
            check_pressure(now, &next_pressure_push);
            next_pressure = now + PL_PRESSURE_CHECK_MS * 1000000ull;
        }
        if (now >= next_tick) {
            tick();
            next_tick += tick_ns;
            if (next_tick <= now)
                next_tick = now + tick_ns;
        }
        if (now >= next_sweep) {
            pl_follow_sweep();
            next_sweep = now + PL_FOLLOW_SWEEP_MS * 1000000ull;
        }
        if (now >= next_mod) {
            /* Sealed: no new module is patched (mprotect, /proc). */
            if (!pl_seccomp_hooks_barred() && pl_modules_changed())
                pl_modules_patch_new();
            if (pl_agent.cfg.follow && !pl_seccomp_hooks_barred())
                pl_maps_cache_refresh();
            next_mod = now + PL_AGENT_MODULE_CHECK_MS * 1000000ull;
        }
        /* The children's misses, cached here for the next children. */
        if (pl_agent.cfg.follow && !pl_agent.forked && !pl_seccomp_hooks_barred())
            pl_cfi_hints_drain(PL_CFI_HINTS);
        for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++) {
            struct pl_client *c = &pl_agent.c[i];
            if (c->fd >= 0 && c->partial_since &&
                now - c->partial_since > PL_AGENT_PARTIAL_TIMEOUT_MS * 1000000ull)
                fail_client(c, -ETIMEDOUT, "incomplete message: timed out");
        }
        /* Sealed by a filter that refuses mprotect, the agent cannot put
         * the slots back itself: it leaves at the ttl only once a cli has
         * come (and put them back from outside), else the slots would
         * point into our (forwarding) hooks for good. */
        if (ttl_ns && !owned() && now >= pl_attach_ns + unowned_ttl_ns(ttl_ns) &&
            (!pl_seccomp_sealed() || pl_seccomp_may(HI_GATE_MPROTECT) || pl_agent.met_since_seal))
            pl_agent.want_detach = 1;
        if (pl_agent.want_detach) {
            pl_session_stop();
            break;
        }

        struct pollfd p[3 + PL_AGENT_MAX_CLIENTS];
        int idx[3 + PL_AGENT_MAX_CLIENTS];
        int n = 0;
        p[n] = (struct pollfd){ pl_agent.listen_fd, POLLIN, 0 };
        idx[n++] = -1;
        p[n] = (struct pollfd){ pl_agent.wake_fd, POLLIN, 0 };
        idx[n++] = -2;
        if (pl_agent.cli_fd >= 0) {
            /* A pidfd polls readable once its process has exited (a
             * zombie included): the cli that injected us died before it
             * could own the session. */
            p[n] = (struct pollfd){ pl_agent.cli_fd, POLLIN, 0 };
            idx[n++] = -3;
        }
        for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++)
            if (pl_agent.c[i].fd >= 0) {
                p[n] = (struct pollfd){ pl_agent.c[i].fd, POLLIN, 0 };
                idx[n++] = i;
            }
        uint64_t wake = next_tick < next_mod ? next_tick : next_mod;
        if (next_pressure < wake)
            wake = next_pressure;
        int timeout = wake > now ? (int)((wake - now) / 1000000u) + 1 : 0;
        pl_seccomp_agent_busy(false);
        int r = poll(p, (nfds_t)n, timeout);
        pl_seccomp_agent_busy(true);
        if (r <= 0)
            continue;
        seccomp_look(); /* a filter that went in while it slept: before any call of a request */
        serve_fatal(); /* before any request: a dying thread waits */
        serve_exit();
        for (int k = 0; k < n; k++) {
            if (!p[k].revents)
                continue;
            if (idx[k] == -1) {
                accept_clients();
            } else if (idx[k] == -3) {
                if (!owned())
                    pl_agent.want_detach = 1;
            } else if (idx[k] == -2) {
                uint64_t v;
                while (read(pl_agent.wake_fd, &v, sizeof(v)) > 0) {
                }
            } else {
                struct pl_client *c = &pl_agent.c[idx[k]];
                if (c->fd == p[k].fd)
                    client_readable(c);
            }
        }
    }

    pl_fatal_set_receiver(0);
    pl_fatal_done(); /* a thread that began to wait just now: nobody will send */
    pl_pymalloc_stop(); /* the hooks are off: Python's allocator back, GIL held (bounded) */
    /* The clients' connections close last, once a new session may start:
     * `heapinject detach` returns on their end of file, and an attach right
     * after it must not find this session still on its way out ("already
     * attached": the resets below take a while on a loaded machine). Only
     * the descriptors are kept: a new session starts with fresh slots. */
    int keep[PL_AGENT_MAX_CLIENTS], nkeep = 0;
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++) {
        if (pl_agent.c[i].fd >= 0)
            keep[nkeep++] = pl_agent.c[i].fd;
        memset(&pl_agent.c[i], 0, sizeof(pl_agent.c[i]));
        pl_agent.c[i].fd = -1;
    }
    pl_census_forget();
    pl_agent_close();
    pl_last_forget();
    if (!pl_seccomp_recheck(HI_GATE_LEAVE)) {
        /* The new filter forbids giving pages back (madvise) or ending
         * this thread (exit, and glibc's madvise of its stack): the
         * tables stay, and the thread sleeps for good. The clients see
         * their end of file first (a `detach` waited 5 s for it). */
        while (nkeep > 0 && pl_seccomp_may(HI_GATE_SERVE))
            close(keep[--nkeep]);
        pl_seccomp_park();
    }
    pl_seccomp_watch_stop();
    pl_session_agent_exited();
    while (nkeep > 0)
        close(keep[--nkeep]);
    return NULL;
}

int pl_agent_listen(const struct hi_config *cfg)
{
    pl_agent.cfg = *cfg;
    pl_agent.want_detach = 0;
    pl_agent.met_since_seal = 0;
    /* A free slot is cleared when it is taken (accept_clients): only one
     * still in use is cleared here. Each slot has pages of its own (a
     * request's buffer), copied in a fork child by any write. */
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++)
        if (pl_agent.c[i].fd != -1) {
            memset(&pl_agent.c[i], 0, sizeof(pl_agent.c[i]));
            pl_agent.c[i].fd = -1;
        }
    int wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wfd < 0)
        return -errno;
    int fd = pl_sock_listen(cfg->sock, &pl_agent.sock_id);
    if (fd < 0) {
        close(wfd);
        return fd;
    }
    pl_agent.listen_fd = fd;
    pl_agent.wake_fd = wfd;
    /* Opened here, inside heapinject_start, while that cli is tracing this
     * thread: it exists now, so the pid cannot name another process yet.
     * ESRCH: it is already gone (killed just now): the agent starts and
     * leaves at once. No pidfd (Linux < 5.3, seccomp): the ttl remains. */
    pl_agent.cli_fd = -1;
    if (cfg->cli_pid) {
        long pfd = syscall(SYS_pidfd_open, (pid_t)cfg->cli_pid, 0u);
        if (pfd >= 0)
            pl_agent.cli_fd = (int)pfd;
        else if (errno == ESRCH)
            pl_agent.want_detach = 1;
    }
    return 0;
}

static void *no_op_thread(void *arg)
{
    return arg;
}

/* Following: a fork child's agent is made on a stack glibc's fork left
 * in the child's cache (its parent agent's), which glibc readies through
 * libc's lazily bound PLT slot of _dl_allocate_tls_init. A process that
 * never reused a stack never bound it, so each child looked the symbol up
 * through every library of its own (PostgreSQL: ~60; 2.3% of the
 * server's CPU under `pgbench -C -S`, pl_agent_start's _dl_fixup) and
 * lost the binding with its copy of the slot when it ended. A thread
 * made and joined here leaves its stack in the cache, and the agent's,
 * made next on it, binds the slot in the parent, for every child to
 * inherit. Joined before the agent starts: nothing of it is left. */
static void bind_stack_reuse(void)
{
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setstacksize(&attr, PL_AGENT_STACK_BYTES); /* the agent's: the same cache entry */
    if (pthread_create(&th, &attr, no_op_thread, NULL) == 0)
        pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
}

int pl_agent_start(int forked)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    int err = pthread_attr_init(&attr);
    if (err)
        return -err;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, PL_AGENT_STACK_BYTES);
    pl_agent.forked = forked;
    /* The new thread inherits this mask: no signal ever lands on it. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (!forked && pl_agent.cfg.follow) {
        bind_stack_reuse();
        pl_cfi_hints_open(); /* before any child: they inherit it */
    } else if (forked) {
        pl_cfi_hints_as_child();
    }
    err = pthread_create(&th, &attr, agent_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err)
        return -err;
    /* Only once nothing can fail any more: start.c undoes nothing after
     * this. A handler is only of use while a cli takes its snapshot. */
    if (pl_agent.cfg.crash || pl_agent.cfg.last)
        pl_fatal_install(pl_agent_wake);
    return 0;
}

void pl_agent_close(void)
{
    if (pl_agent.listen_fd >= 0) {
        pl_sock_unlink(pl_agent.cfg.sock, &pl_agent.sock_id);
        close(pl_agent.listen_fd);
        pl_agent.listen_fd = -1;
    }
    if (pl_agent.wake_fd >= 0) {
        close(pl_agent.wake_fd);
        pl_agent.wake_fd = -1;
    }
    if (pl_agent.cli_fd >= 0) {
        close(pl_agent.cli_fd);
        pl_agent.cli_fd = -1;
    }
}

void pl_agent_wake(void)
{
    uint64_t one = 1;
    if (pl_agent.wake_fd >= 0 && write(pl_agent.wake_fd, &one, sizeof(one)) < 0) {
        /* full counter: the agent is awake anyway */
    }
}

int pl_agent_parent_socket_there(void)
{
    struct stat st;
    return lstat(pl_agent.cfg.sock, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == pl_agent.sock_id.dev &&
           st.st_ino == pl_agent.sock_id.ino;
}

void pl_agent_detach_at_start(void)
{
    pl_agent.want_detach = 1;
}

void pl_agent_unlink_socket(void)
{
    pl_sock_unlink(pl_agent.cfg.sock, &pl_agent.sock_id);
}

PL_FORK_TEXT void pl_agent_atfork_child(void)
{
    /* Not unlinking: the socket file belongs to the parent's agent. */
    for (int i = 0; i < PL_AGENT_MAX_CLIENTS; i++)
        if (pl_agent.c[i].fd >= 0) {
            close(pl_agent.c[i].fd);
            pl_agent.c[i].fd = -1;
        }
    /* Detached, all are -1 already: no write, no page copied. */
    if (pl_agent.listen_fd >= 0)
        close(pl_agent.listen_fd), pl_agent.listen_fd = -1;
    if (pl_agent.wake_fd >= 0)
        close(pl_agent.wake_fd), pl_agent.wake_fd = -1;
    if (pl_agent.cli_fd >= 0)
        close(pl_agent.cli_fd), pl_agent.cli_fd = -1;
    pl_pymalloc_atfork_child();
}
