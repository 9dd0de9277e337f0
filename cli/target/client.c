/* client.c - connect to the agent, frame and validate its messages, turn
 * snapshot records into a struct cli_profile.
 *
 * Byte order: the protocol is little-endian and heapinject only runs on
 * little-endian machines (x86-64, aarch64), so packed structs are memcpy'd
 * as they are, always after the length has been checked. */
#include "cli/target/client.h"

#include "cli/census/census.h"
#include "cli/target/snapnodes.h"
#include "common/snap_stack.h"

#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *type_name(unsigned type)
{
    switch (type) {
    case HI_MSG_HELLO: return "HELLO";
    case HI_MSG_SNAPSHOT_REQ: return "SNAPSHOT_REQ";
    case HI_MSG_SET_RATE: return "SET_RATE";
    case HI_MSG_WATCH: return "WATCH";
    case HI_MSG_DETACH: return "DETACH";
    case HI_MSG_OWN_SESSION: return "OWN_SESSION";
    case HI_MSG_ACK: return "ACK";
    case HI_MSG_ERROR: return "ERROR";
    case HI_MSG_TICK: return "TICK";
    case HI_MSG_SNAP_BEGIN: return "SNAP_BEGIN";
    case HI_MSG_SNAP_THREAD: return "SNAP_THREAD";
    case HI_MSG_SNAP_HIST: return "SNAP_HIST";
    case HI_MSG_SNAP_BUCKET: return "SNAP_BUCKET";
    case HI_MSG_SNAP_MMAP: return "SNAP_MMAP";
    case HI_MSG_SNAP_MAPS: return "SNAP_MAPS";
    case HI_MSG_SNAP_END: return "SNAP_END";
    case HI_MSG_SNAP_NODES: return "SNAP_NODES";
    case HI_MSG_SNAP_WALKS: return "SNAP_WALKS";
    case HI_MSG_SNAP_STACKS: return "SNAP_STACKS";
    case HI_MSG_ALLOC_STATS_REQ: return "ALLOC_STATS_REQ";
    case HI_MSG_TRIM_REQ: return "TRIM_REQ";
    case HI_MSG_ALLOC_STATS: return "ALLOC_STATS";
    case HI_MSG_TRIM_DONE: return "TRIM_DONE";
    case HI_MSG_CENSUS_REQ: return "CENSUS_REQ";
    case HI_MSG_CENSUS_GROUP: return "CENSUS_GROUP";
    case HI_MSG_CENSUS_ROOT: return "CENSUS_ROOT";
    case HI_MSG_CENSUS_END: return "CENSUS_END";
    case HI_MSG_CENSUS_PYTHON: return "CENSUS_PYTHON";
    case HI_MSG_CENSUS_PYTYPE: return "CENSUS_PYTYPE";
    case HI_MSG_CENSUS_PREP: return "CENSUS_PREP";
    case HI_MSG_CENSUS_REGS: return "CENSUS_REGS";
    case HI_MSG_CENSUS_READY: return "CENSUS_READY";
    case HI_MSG_CENSUS_FORKED: return "CENSUS_FORKED";
    case HI_MSG_SNAP_PUSH: return "SNAP_PUSH";
    default: return NULL;
    }
}

__attribute__((format(printf, 3, 4)))
static int fail(struct cli_client *c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    /* After a framing error or a lost connection the stream position is
     * unknown: nothing more can be read from it. */
    if (err == -EPROTO || err == -ECONNRESET || err == -ETIMEDOUT || err == -EPIPE)
        c->broken = true;
    return err;
}

/* Ends every message about a bound the agent went past: a real agent stays
 * well inside them (client.h), so the peer is probably not one. */
#define PAST_BOUND " (a heapinject profiler never sends that much: is the socket served by something else?)"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_client_init(struct cli_client *c)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->timeout_ms = CLI_CLIENT_TIMEOUT_MS;
}

static int ensure_buf(struct cli_client *c)
{
    if (!c->buf && !(c->buf = malloc(HI_MAX_RECORD_BODY)))
        return fail(c, -ENOMEM, "out of memory");
    if (!c->rbuf && !(c->rbuf = malloc(CLI_CLIENT_RBUF)))
        return fail(c, -ENOMEM, "out of memory");
    c->rpos = c->rlen = 0;
    return 0;
}

/* Waits up to timeout_ms for something to read: what is buffered counts. */
static int wait_readable(struct cli_client *c, int timeout_ms)
{
    if (c->rpos < c->rlen)
        return 1;
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
    int pr = poll(&pfd, 1, timeout_ms);
    return pr < 0 ? -errno : pr;
}

int cli_client_use_fd(struct cli_client *c, int fd)
{
    c->fd = fd;
    c->broken = false;
    return ensure_buf(c);
}

int cli_client_connect(struct cli_client *c, const char *path, pid_t expect_pid)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path))
        return fail(c, -ENAMETOOLONG, "socket path %s is too long", path);
    memcpy(sa.sun_path, path, strlen(path) + 1);

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(c, -errno, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(fd);
        return fail(c, -e, "connect %s: %s", path, strerror(e));
    }
    if (expect_pid > 0) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0 &&
            cred.pid != expect_pid) {
            close(fd);
            return fail(c, -ESRCH, "socket %s is served by pid %d, not by pid %d", path,
                        (int)cred.pid, (int)expect_pid);
        }
    }
    return cli_client_use_fd(c, fd);
}

static int write_all(struct cli_client *c, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE || errno == ECONNRESET)
                return fail(c, -ECONNRESET, "the agent closed the connection");
            return fail(c, -errno, "send: %s", strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads exactly len bytes before the deadline. EOF before the first byte
 * of a message is a closed connection, EOF inside one a truncated message. */
static int read_all(struct cli_client *c, void *data, size_t len, int64_t deadline, bool mid_msg)
{
    char *p = data;
    size_t got = 0;
    while (got < len) {
        if (c->rpos < c->rlen) {
            size_t n = c->rlen - c->rpos < len - got ? c->rlen - c->rpos : len - got;
            memcpy(p + got, c->rbuf + c->rpos, n);
            c->rpos += n;
            got += n;
            continue;
        }
        int64_t left = deadline - now_ms();
        if (left < 0)
            left = 0;
        int pr = wait_readable(c, (int)(left > 0x7fffffff ? 0x7fffffff : left));
        if (pr < 0) {
            if (pr == -EINTR)
                continue;
            return fail(c, pr, "poll: %s", strerror(-pr));
        }
        if (pr == 0)
            return fail(c, -ETIMEDOUT, "the agent did not answer within %d ms", c->timeout_ms);
        ssize_t n = read(c->fd, c->rbuf, CLI_CLIENT_RBUF);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno == ECONNRESET)
                n = 0;
            else
                return fail(c, -errno, "read: %s", strerror(errno));
        }
        if (n == 0) {
            if (!mid_msg && got == 0)
                return fail(c, -ECONNRESET, "the agent closed the connection");
            return fail(c, -EPROTO, "truncated message from the agent (connection closed after %zu of %zu bytes)",
                        got, len);
        }
        c->rpos = 0;
        c->rlen = (size_t)n;
    }
    return 0;
}

static int send_msg(struct cli_client *c, uint16_t type, const void *body, uint32_t len)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, len };
    unsigned char msg[sizeof(h) + HI_MAX_REQUEST_BODY];
    if (c->fd < 0 || c->broken)
        return fail(c, -ENOTCONN, "not connected to the agent");
    if (len > HI_MAX_REQUEST_BODY)
        return fail(c, -EMSGSIZE, "request too long");
    memcpy(msg, &h, sizeof(h));
    if (len)
        memcpy(msg + sizeof(h), body, len);
    /* One send: the agent never sees half a request from us. */
    return write_all(c, msg, sizeof(h) + len);
}

static int store_tick(struct cli_client *c, const struct hi_tick *t)
{
    c->last_tick = *t;
    c->tick_count++;
    if (c->nticks >= CLI_CLIENT_MAX_TICKS)
        return 0; /* a week of ticks: keep the newest totals only */
    if (c->nticks == c->cap_ticks) {
        size_t nc = c->cap_ticks ? c->cap_ticks * 2 : 256;
        struct cli_tick *nt = realloc(c->ticks, nc * sizeof(*nt));
        if (!nt)
            return fail(c, -ENOMEM, "out of memory");
        c->ticks = nt;
        c->cap_ticks = nc;
    }
    struct cli_tick *ct = &c->ticks[c->nticks++];
    ct->t_s = cli_client_since_attach(c, t->now_ns);
    ct->live_bytes = t->totals.est_live_bytes;
    ct->alloc_bytes = t->totals.est_alloc_bytes;
    ct->rss_bytes = t->rss_bytes;
    return 0;
}

static int recv_pushed(struct cli_client *c, uint32_t len);

/* Reads one message into h and c->buf, after checking its framing. TICK,
 * SNAP_PUSH and ERROR are handled here: a TICK is stored, a pushed snapshot
 * read whole and kept, and, unless the caller asked for them (want_tick),
 * the next message is read. */
static int recv_msg(struct cli_client *c, struct hi_msg_header *h, int timeout_ms, bool want_tick)
{
    if (c->fd < 0 || c->broken)
        return fail(c, -ENOTCONN, "not connected to the agent");
    for (;;) {
        int64_t deadline = now_ms() + timeout_ms;
        int rc = read_all(c, h, sizeof(*h), deadline, false);
        if (rc < 0)
            return rc;
        if (h->magic != HI_PROTO_MAGIC)
            return fail(c, -EPROTO, "garbage from the agent (bad magic 0x%08x): is this a heapinject socket?",
                        h->magic);
        if (h->version != HI_PROTO_VERSION)
            return fail(c, -EPROTO,
                        "the agent speaks protocol version %u, this heapinject speaks %u: "
                        "use the heapinject that attached it, or detach it first",
                        h->version, HI_PROTO_VERSION);
        const char *name = type_name(h->type);
        if (!name || (h->type < HI_MSG_ACK && h->type != HI_MSG_HELLO))
            return fail(c, -EPROTO, "unexpected message type %u from the agent", h->type);
        if (h->length > HI_MAX_RECORD_BODY)
            return fail(c, -EPROTO, "oversized %s message from the agent (%u bytes, the bound is %u)",
                        name, h->length, HI_MAX_RECORD_BODY);
        /* The body must arrive soon after its header. */
        rc = read_all(c, c->buf, h->length, now_ms() + c->timeout_ms, true);
        if (rc < 0)
            return rc;
        if (h->type == HI_MSG_ERROR) {
            struct hi_error e;
            if (h->length != sizeof(e))
                return fail(c, -EPROTO, "malformed ERROR message from the agent (%u bytes)", h->length);
            memcpy(&e, c->buf, sizeof(e));
            e.message[sizeof(e.message) - 1] = '\0';
            for (char *s = e.message; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
                    *s = '?'; /* never print control characters from the wire */
            c->remote_code = e.code;
            return fail(c, -EREMOTEIO, "the agent reports: %s%s%s", e.message[0] ? e.message : "an error",
                        e.code < 0 && e.code > -4096 ? ": " : "",
                        e.code < 0 && e.code > -4096 ? strerror(-e.code) : "");
        }
        if (h->type == HI_MSG_TICK) {
            struct hi_tick t;
            if (h->length != sizeof(t))
                return fail(c, -EPROTO, "malformed TICK message from the agent (%u bytes, expected %zu)",
                            h->length, sizeof(t));
            memcpy(&t, c->buf, sizeof(t));
            if ((rc = store_tick(c, &t)) < 0)
                return rc;
            if (want_tick)
                return 0;
            continue;
        }
        if (h->type == HI_MSG_SNAP_PUSH) {
            if ((rc = recv_pushed(c, h->length)) < 0)
                return rc;
            if (want_tick)
                return 0;
            continue;
        }
        return 0;
    }
}

/* Reads the next message, which must be of type `want` with a body of
 * exactly `len` bytes (copied to out when out != NULL). */
static int expect(struct cli_client *c, uint16_t want, void *out, uint32_t len)
{
    struct hi_msg_header h;
    int rc = recv_msg(c, &h, c->timeout_ms, false);
    if (rc < 0)
        return rc;
    if (h.type != want)
        return fail(c, -EPROTO, "the agent sent %s where %s was expected", type_name(h.type),
                    type_name(want));
    if (h.length != len)
        return fail(c, -EPROTO, "malformed %s message from the agent (%u bytes, expected %u)",
                    type_name(want), h.length, len);
    if (out)
        memcpy(out, c->buf, len);
    return 0;
}

int cli_client_hello(struct cli_client *c)
{
    struct hi_hello_client hc = { HI_PROTO_VERSION };
    int rc = send_msg(c, HI_MSG_HELLO, &hc, sizeof(hc));
    if (rc < 0)
        return rc;
    if ((rc = expect(c, HI_MSG_HELLO, &c->hello, sizeof(c->hello))) < 0)
        return rc;
    if (c->hello.version != HI_PROTO_VERSION)
        return fail(c, -EPROTO, "the agent speaks protocol version %u, this heapinject speaks %u",
                    c->hello.version, HI_PROTO_VERSION);
    return 0;
}

static int request_ack(struct cli_client *c, uint16_t type, const void *body, uint32_t len)
{
    struct hi_ack ack;
    int rc = send_msg(c, type, body, len);
    if (rc < 0)
        return rc;
    if ((rc = expect(c, HI_MSG_ACK, &ack, sizeof(ack))) < 0)
        return rc;
    if (ack.type != type)
        return fail(c, -EPROTO, "the agent acknowledged %s instead of %s",
                    type_name(ack.type) ? type_name(ack.type) : "an unknown request", type_name(type));
    return 0;
}

int cli_client_set_rate(struct cli_client *c, uint64_t rate)
{
    struct hi_set_rate r = { rate };
    return request_ack(c, HI_MSG_SET_RATE, &r, sizeof(r));
}

int cli_client_watch(struct cli_client *c)
{
    return request_ack(c, HI_MSG_WATCH, NULL, 0);
}

int cli_client_own_session(struct cli_client *c)
{
    return request_ack(c, HI_MSG_OWN_SESSION, NULL, 0);
}

int cli_client_detach(struct cli_client *c)
{
    return request_ack(c, HI_MSG_DETACH, NULL, 0);
}

/* NUL-terminates a fixed string from the wire and blanks control characters. */
static void clean_wire_string(char *s, size_t len)
{
    s[len - 1] = '\0';
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = '?';
}

int cli_client_alloc_stats(struct cli_client *c, struct hi_alloc_stats *st)
{
    int rc = send_msg(c, HI_MSG_ALLOC_STATS_REQ, NULL, 0);
    if (rc < 0)
        return rc;
    if ((rc = expect(c, HI_MSG_ALLOC_STATS, st, sizeof(*st))) < 0)
        return rc;
    clean_wire_string(st->why, sizeof(st->why));
    return 0;
}

int cli_client_trim(struct cli_client *c, struct hi_trim_done *t, struct hi_alloc_stats *after)
{
    /* malloc_trim walks every free chunk of every arena: give it time. */
    int saved = c->timeout_ms, rc;
    c->timeout_ms = saved < 60000 ? 60000 : saved;
    rc = send_msg(c, HI_MSG_TRIM_REQ, NULL, 0);
    if (rc == 0)
        rc = expect(c, HI_MSG_TRIM_DONE, t, sizeof(*t));
    c->timeout_ms = saved;
    if (rc < 0)
        return rc;
    clean_wire_string(t->how, sizeof(t->how));
    clean_wire_string(t->why, sizeof(t->why));
    if ((rc = expect(c, HI_MSG_ALLOC_STATS, after, sizeof(*after))) < 0)
        return rc;
    clean_wire_string(after->why, sizeof(after->why));
    return 0;
}

static void take_census_end(const struct cli_client *c, struct cli_census *out)
{
    memcpy(&out->end, c->buf, sizeof(out->end));
    clean_wire_string(out->end.why, sizeof(out->end.why));
}

/* With hooks: PREP, then READY (or END: no census), the threads held and
 * their registers sent, REQ. */
static int census_start(struct cli_client *c, struct cli_census *out, const struct cli_census_hooks *hooks,
                        bool *ended)
{
    if (!hooks)
        return send_msg(c, HI_MSG_CENSUS_REQ, NULL, 0);
    struct hi_msg_header h;
    int rc = send_msg(c, HI_MSG_CENSUS_PREP, hooks->layout, hooks->layout ? sizeof(*hooks->layout) : 0);
    if (rc == 0)
        rc = recv_msg(c, &h, c->timeout_ms, false);
    if (rc < 0)
        return rc;
    if (h.type == HI_MSG_CENSUS_END && h.length == sizeof(struct hi_census_end)) {
        take_census_end(c, out);
        *ended = true;
        return 0;
    }
    if (h.type != HI_MSG_CENSUS_READY || h.length != sizeof(struct hi_census_ready))
        return fail(c, -EPROTO, "the agent answered a census with %s (%u bytes)",
                    type_name(h.type) ? type_name(h.type) : "?", h.length);
    struct hi_census_ready r;
    memcpy(&r, c->buf, sizeof(r));
    const struct hi_census_regs *regs = NULL;
    size_t n = 0;
    hooks->ready(hooks->arg, r.agent_tid, &regs, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = send_msg(c, HI_MSG_CENSUS_REGS, &regs[i], sizeof(regs[i]));
    if (rc == 0)
        rc = send_msg(c, HI_MSG_CENSUS_REQ, NULL, 0);
    if (rc < 0 || !n) {
        hooks->forked(hooks->arg); /* no FORKED comes without registers */
        return rc;
    }
    /* The threads are held until FORKED: wait for it at most fork_wait_ms
     * (whatever comes first is read by the caller's loop). */
    int pr;
    while ((pr = wait_readable(c, hooks->fork_wait_ms)) == -EINTR)
        ;
    if (pr <= 0)
        hooks->forked(hooks->arg);
    return 0;
}

int cli_client_census(struct cli_client *c, struct cli_census *out, int timeout_ms,
                      const struct cli_census_hooks *hooks)
{
    int saved = c->timeout_ms, rc;
    bool ended = false;
    c->timeout_ms = timeout_ms; /* the agent answers when the census is done */
    uint64_t bytes = 0;
    rc = census_start(c, out, hooks, &ended);
    while (rc == 0 && !ended) {
        struct hi_msg_header h;
        if ((rc = recv_msg(c, &h, c->timeout_ms, false)) < 0)
            break;
        if ((bytes += sizeof(h) + h.length) > CLI_CLIENT_MAX_CENSUS_BYTES) {
            rc = fail(c, -EPROTO, "the agent's census is larger than %u MiB, the bound" PAST_BOUND,
                      CLI_CLIENT_MAX_CENSUS_BYTES >> 20);
            break;
        }
        if (h.type == HI_MSG_CENSUS_FORKED && hooks) {
            hooks->forked(hooks->arg);
        } else if (h.type == HI_MSG_CENSUS_GROUP && h.length == sizeof(struct hi_census_group)) {
            struct hi_census_group g;
            memcpy(&g, c->buf, sizeof(g));
            if (cli_census_add_group(out, &g) < 0)
                rc = fail(c, -ENOMEM, "too many census groups from the agent");
        } else if (h.type == HI_MSG_CENSUS_ROOT && h.length == sizeof(struct hi_census_root)) {
            struct hi_census_root r;
            memcpy(&r, c->buf, sizeof(r));
            clean_wire_string(r.thread, sizeof(r.thread));
            if (cli_census_add_root(out, &r) < 0)
                rc = fail(c, -ENOMEM, "too many census roots from the agent");
        } else if (h.type == HI_MSG_CENSUS_PYTHON && h.length == sizeof(struct hi_census_python)) {
            struct hi_census_python py;
            memcpy(&py, c->buf, sizeof(py));
            clean_wire_string(py.why, sizeof(py.why));
            if (cli_census_set_python(out, &py) < 0)
                rc = fail(c, -EPROTO, "a second Python section in one census");
        } else if (h.type == HI_MSG_CENSUS_PYTYPE && h.length == sizeof(struct hi_census_pytype)) {
            struct hi_census_pytype t;
            memcpy(&t, c->buf, sizeof(t));
            clean_wire_string(t.name, sizeof(t.name));
            if (cli_census_add_pytype(out, &t) < 0)
                rc = fail(c, -EPROTO, "a Python type outside the census's Python section, or too many");
        } else if (h.type == HI_MSG_CENSUS_END && h.length == sizeof(struct hi_census_end)) {
            take_census_end(c, out);
            break;
        } else {
            rc = fail(c, -EPROTO, "the agent sent %s (%u bytes) in the middle of a census",
                      type_name(h.type) ? type_name(h.type) : "?", h.length);
        }
    }
    if (hooks)
        hooks->forked(hooks->arg); /* never leave a thread held */
    c->timeout_ms = saved;
    return rc;
}

static int push_stack(struct cli_client *c, struct cli_profile *p, size_t *cap, const struct hi_snap_bucket *bp,
                      uint32_t kind, uint64_t *pcs);

static int add_bucket(struct cli_client *c, struct cli_profile *p, size_t *cap, uint32_t len)
{
    struct hi_snap_bucket b;
    if (len < sizeof(b))
        return fail(c, -EPROTO, "malformed SNAP_BUCKET message from the agent (%u bytes)", len);
    memcpy(&b, c->buf, sizeof(b));
    if (b.nframes > HI_MAX_FRAMES)
        return fail(c, -EPROTO, "SNAP_BUCKET with %u frames (the bound is %u)", b.nframes, HI_MAX_FRAMES);
    /* The PCs, then (not malloc) a hi_snap_bucket_ext of at least its
     * kind: longer ones come from newer agents and keep their fields. */
    size_t base = sizeof(b) + (size_t)b.nframes * sizeof(uint64_t);
    uint32_t kind = HI_KIND_MALLOC;
    if (len != base && len < base + sizeof(uint32_t))
        return fail(c, -EPROTO, "SNAP_BUCKET of %u bytes does not match its %u frames", len, b.nframes);
    if (len > base) {
        memcpy(&kind, c->buf + base, sizeof(kind));
        if (kind >= HI_KIND_COUNT)
            return fail(c, -EPROTO, "SNAP_BUCKET of an unknown kind %u", kind);
    }
    uint64_t *pcs = NULL;
    if (b.nframes) {
        if (!(pcs = malloc(b.nframes * sizeof(uint64_t))))
            return fail(c, -ENOMEM, "out of memory");
        memcpy(pcs, c->buf + sizeof(b), b.nframes * sizeof(uint64_t));
    }
    return push_stack(c, p, cap, &b, kind, pcs);
}

/* Appends a stack with its counters from b and its PCs (taken over: freed
 * on error too). */
static int push_stack(struct cli_client *c, struct cli_profile *p, size_t *cap, const struct hi_snap_bucket *bp,
                      uint32_t kind, uint64_t *pcs)
{
    struct hi_snap_bucket b = *bp;
    if (p->nstacks >= CLI_CLIENT_MAX_BUCKETS) {
        free(pcs);
        return fail(c, -EPROTO, "the agent sent more than %u stacks, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_BUCKETS);
    }
    if (p->nstacks == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        struct cli_stack *ns = realloc(p->stacks, nc * sizeof(*ns));
        if (!ns) {
            free(pcs);
            return fail(c, -ENOMEM, "out of memory");
        }
        p->stacks = ns;
        *cap = nc;
    }
    struct cli_stack *s = &p->stacks[p->nstacks];
    memset(s, 0, sizeof(*s));
    s->pcs = pcs;
    s->npcs = b.nframes;
    s->live_bytes = (double)b.est_live_bytes;
    s->live_objects = (double)b.est_live_objects;
    s->alloc_bytes = (double)b.est_alloc_bytes;
    s->alloc_objects = (double)b.est_alloc_objects;
    s->raw_live_bytes = b.raw_live_bytes;
    s->raw_live_objects = b.raw_live_objects;
    s->raw_alloc_bytes = b.raw_alloc_bytes;
    s->raw_alloc_objects = b.raw_alloc_objects;
    s->oldest_live_ns = b.oldest_live_ns;
    s->live_age_sum_ms = b.live_age_sum_ms;
    memcpy(s->growth, b.growth, sizeof(s->growth));
    s->first_tid = b.first_tid;
    s->kind = kind;
    p->nstacks++;
    return 0;
}

static int add_thread(struct cli_client *c, struct cli_profile *p, size_t *cap, uint32_t len)
{
    struct hi_snap_thread t;
    if (len != sizeof(t))
        return fail(c, -EPROTO, "malformed SNAP_THREAD message from the agent (%u bytes)", len);
    if (p->nthreads >= CLI_CLIENT_MAX_THREADS)
        return fail(c, -EPROTO, "the agent sent more than %u threads, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_THREADS);
    memcpy(&t, c->buf, sizeof(t));
    if (p->nthreads == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct cli_thread *nt = realloc(p->threads, nc * sizeof(*nt));
        if (!nt)
            return fail(c, -ENOMEM, "out of memory");
        p->threads = nt;
        *cap = nc;
    }
    struct cli_thread *ct = &p->threads[p->nthreads++];
    memset(ct, 0, sizeof(*ct));
    ct->tid = t.tid;
    ct->alive = t.alive != 0;
    /* The name is NUL-padded on the wire but need not be terminated. Kept
     * as the thread named itself: every writer escapes it as it escapes
     * other names from the target (\x1b in text, \u001b in JSON); a '?'
     * here made --by thread differ from the rest, and an escape here
     * would be escaped twice (issue 25). */
    for (size_t i = 0; i < HI_THREAD_NAME_LEN && t.name[i]; i++)
        ct->name[i] = t.name[i];
    ct->alloc_bytes = t.alloc_bytes;
    ct->alloc_calls = t.alloc_calls;
    ct->free_bytes = t.free_bytes;
    ct->free_calls = t.free_calls;
    return 0;
}

/* What one snapshot has taken so far, against the bounds of client.h. */
struct snap_state {
    struct cli_snapnodes nodes; /* SNAP_NODES so far (HI_SNAP_WANT_NODES) */
    size_t cap_stacks, cap_threads, cap_maps;
    uint64_t bytes;        /* headers and bodies of its records */
    size_t maps_lines;     /* complete lines of maps text */
    size_t line_len;       /* bytes of the maps line not yet ended */
};

static int add_maps(struct cli_client *c, struct cli_profile *p, struct snap_state *st, uint32_t len)
{
    if (p->maps_len + len > CLI_CLIENT_MAX_MAPS)
        return fail(c, -EPROTO, "the agent sent more than %u MiB of maps text, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_MAPS >> 20);
    /* Each line becomes a module the symbolizer keeps: count them, and
     * refuse a line no kernel writes (a path is at most PATH_MAX). */
    for (const uint8_t *q = c->buf, *end = c->buf + len; q < end;) {
        const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
        st->line_len += (size_t)((nl ? nl : end) - q);
        if (st->line_len > CLI_CLIENT_MAX_MAPS_LINE)
            return fail(c, -EPROTO, "the agent sent a maps line longer than %u bytes, the bound" PAST_BOUND,
                        CLI_CLIENT_MAX_MAPS_LINE);
        if (!nl)
            break;
        st->line_len = 0;
        if (++st->maps_lines > CLI_CLIENT_MAX_MAPS_LINES)
            return fail(c, -EPROTO, "the agent sent more than %u lines of maps, the bound" PAST_BOUND,
                        CLI_CLIENT_MAX_MAPS_LINES);
        q = nl + 1;
    }
    if (p->maps_len + len + 1 > st->cap_maps) {
        size_t nc = st->cap_maps ? st->cap_maps : 16384;
        while (nc < p->maps_len + len + 1)
            nc *= 2;
        char *nm = realloc(p->maps, nc);
        if (!nm)
            return fail(c, -ENOMEM, "out of memory");
        p->maps = nm;
        st->cap_maps = nc;
    }
    memcpy(p->maps + p->maps_len, c->buf, len);
    p->maps_len += len;
    p->maps[p->maps_len] = '\0';
    return 0;
}

/* One SNAP_STACKS record: stacks whose PCs are paths of st->nodes. */
static int add_stacks(struct cli_client *c, struct cli_profile *p, struct snap_state *st, uint32_t len)
{
    char why[160];
    if (len == 0)
        return fail(c, -EPROTO, "malformed SNAP_STACKS message from the agent (empty)");
    for (const uint8_t *q = c->buf, *end = c->buf + len; q < end;) {
        struct hi_snap_bucket b;
        uint32_t node, kind;
        if (hi_snap_stack_get(&q, end, &b, &node, &kind) < 0)
            return fail(c, -EPROTO, "malformed SNAP_STACKS message from the agent (a stack cut off or out of "
                                    "range at byte %zu of %u)", (size_t)(q - c->buf), len);
        if (kind >= HI_KIND_COUNT)
            return fail(c, -EPROTO, "SNAP_STACKS holds a stack of an unknown kind %u", kind);
        if (b.nframes > HI_MAX_FRAMES)
            return fail(c, -EPROTO, "SNAP_STACKS holds a stack of %u frames (the bound is %u)", b.nframes,
                        HI_MAX_FRAMES);
        uint64_t *pcs;
        int rc = cli_snapnodes_stack(&st->nodes, node, b.nframes, &pcs, why, sizeof(why));
        if (rc < 0)
            return fail(c, rc, "%s", why);
        if ((rc = push_stack(c, p, &st->cap_stacks, &b, kind, pcs)) < 0)
            return rc;
    }
    return 0;
}

/* The records of one snapshot, SNAP_BEGIN to SNAP_END, into p (zeroed by
 * the caller): an answer to SNAPSHOT_REQ or a pushed one. */
static int recv_snapshot(struct cli_client *c, struct cli_profile *p)
{
    struct hi_snap_begin b;
    struct snap_state st = { 0 };
    bool have_hist = false;
    int rc;

    if ((rc = expect(c, HI_MSG_SNAP_BEGIN, &b, sizeof(b))) < 0)
        return rc;
    p->pid = b.pid;
    p->rate = b.rate;
    p->attach_ns = b.attach_ns;
    p->snapshot_ns = b.now_ns;
    p->duration_s = b.now_ns > b.attach_ns ? (double)(b.now_ns - b.attach_ns) / 1e9 : 0;
    p->rss_bytes = b.rss_bytes;
    p->totals = b.totals;
    p->tick_ms = c->hello.tick_ms;

    for (;;) {
        struct hi_msg_header h;
        if ((rc = recv_msg(c, &h, c->timeout_ms, false)) < 0)
            goto out;
        st.bytes += sizeof(h) + h.length;
        if (st.bytes > CLI_CLIENT_MAX_SNAPSHOT_BYTES) {
            rc = fail(c, -EPROTO, "the agent's snapshot is larger than %u MiB, the bound" PAST_BOUND,
                      CLI_CLIENT_MAX_SNAPSHOT_BYTES >> 20);
            goto out;
        }
        switch (h.type) {
        case HI_MSG_SNAP_THREAD:
            rc = add_thread(c, p, &st.cap_threads, h.length);
            break;
        case HI_MSG_SNAP_HIST:
            if (have_hist || h.length != sizeof(p->hist)) {
                rc = fail(c, -EPROTO, "malformed or repeated SNAP_HIST message from the agent");
                break;
            }
            memcpy(&p->hist, c->buf, sizeof(p->hist));
            have_hist = true;
            break;
        case HI_MSG_SNAP_MMAP: /* absent from older agents */
            if (p->have_mmap || h.length < sizeof(p->mmap)) {
                rc = fail(c, -EPROTO, "malformed or repeated SNAP_MMAP message from the agent");
                break;
            }
            memcpy(&p->mmap, c->buf, sizeof(p->mmap));
            p->have_mmap = true;
            break;
        case HI_MSG_SNAP_WALKS: /* asked for; a longer body has fields we do not know */
            if (p->have_walks || h.length < offsetof(struct hi_snap_walks, budget_bytes)) {
                rc = fail(c, -EPROTO, "malformed or repeated SNAP_WALKS message from the agent");
                break;
            }
            memset(&p->walks, 0, sizeof(p->walks)); /* an older agent's has no budget */
            memcpy(&p->walks, c->buf, h.length < sizeof(p->walks) ? h.length : sizeof(p->walks));
            if (p->walks.truncated > p->walks.walks) /* racy reads in the agent: never more than all */
                p->walks.truncated = p->walks.walks;
            p->have_walks = true;
            break;
        case HI_MSG_SNAP_BUCKET:
            rc = add_bucket(c, p, &st.cap_stacks, h.length);
            break;
        case HI_MSG_SNAP_NODES: {
            char why[160];
            if ((rc = cli_snapnodes_add(&st.nodes, c->buf, h.length, why, sizeof(why))) < 0)
                rc = fail(c, rc, "%s%s", why, rc == -EPROTO && strstr(why, "the bound") ? PAST_BOUND : "");
            break;
        }
        case HI_MSG_SNAP_STACKS:
            rc = add_stacks(c, p, &st, h.length);
            break;
        case HI_MSG_SNAP_MAPS:
            rc = add_maps(c, p, &st, h.length);
            break;
        case HI_MSG_SNAP_END: {
            struct hi_snap_end e;
            if (h.length != sizeof(e)) {
                rc = fail(c, -EPROTO, "malformed SNAP_END message from the agent (%u bytes)", h.length);
                break;
            }
            memcpy(&e, c->buf, sizeof(e));
            if (e.buckets_sent != p->nstacks) {
                rc = fail(c, -EPROTO, "the agent announced %llu stacks but sent %zu",
                          (unsigned long long)e.buckets_sent, p->nstacks);
                break;
            }
            cli_snapnodes_free(&st.nodes);
            return 0;
        }
        default:
            rc = fail(c, -EPROTO, "the agent sent %s in the middle of a snapshot", type_name(h.type));
            break;
        }
        if (rc < 0)
            goto out;
    }
out:
    cli_snapnodes_free(&st.nodes);
    cli_profile_free(p);
    return rc;
}

int cli_client_snapshot(struct cli_client *c, struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    /* Stacks as nodes: they share their outer frames (an older agent
     * ignores the body and sends SNAP_BUCKETs, which are still read), and
     * how the stack walks went (an older agent sends no SNAP_WALKS). */
    struct hi_snapshot_req req = { HI_SNAP_WANT_NODES | HI_SNAP_WANT_WALKS, 0 };
    int rc = send_msg(c, HI_MSG_SNAPSHOT_REQ, &req, sizeof(req));
    return rc < 0 ? rc : recv_snapshot(c, p);
}

static void drop_pushed(struct cli_client *c)
{
    if (!c->pushed)
        return;
    cli_profile_free(&c->pushed->p);
    free(c->pushed);
    c->pushed = NULL;
}

/* SNAP_PUSH's body is in c->buf: the snapshot that follows replaces the
 * one kept. A push inside a push is no agent's. */
static int recv_pushed(struct cli_client *c, uint32_t len)
{
    struct cli_pushed *np;
    if (len != sizeof(np->why))
        return fail(c, -EPROTO, "malformed SNAP_PUSH message from the agent (%u bytes)", len);
    if (c->in_push)
        return fail(c, -EPROTO, "the agent pushed a snapshot in the middle of another");
    if (!(np = calloc(1, sizeof(*np))))
        return fail(c, -ENOMEM, "out of memory");
    memcpy(&np->why, c->buf, sizeof(np->why));
    c->in_push = true;
    int rc = recv_snapshot(c, &np->p);
    c->in_push = false;
    if (rc < 0) {
        free(np);
        return rc;
    }
    drop_pushed(c);
    c->pushed = np;
    c->push_count++;
    return 0;
}

bool cli_client_take_pushed(struct cli_client *c, struct cli_profile *p, struct hi_snap_push *why)
{
    if (!c->pushed)
        return false;
    *p = c->pushed->p;
    *why = c->pushed->why;
    free(c->pushed);
    c->pushed = NULL;
    return true;
}

int cli_client_pump(struct cli_client *c, int timeout_ms)
{
    struct hi_msg_header h;
    if (c->fd < 0 || c->broken)
        return fail(c, -ENOTCONN, "not connected to the agent");
    int pr = wait_readable(c, timeout_ms);
    if (pr < 0)
        return pr == -EINTR ? 0 : fail(c, pr, "poll: %s", strerror(-pr));
    if (pr == 0)
        return 0;
    int rc = recv_msg(c, &h, c->timeout_ms, true);
    if (rc < 0)
        return rc;
    if (h.type == HI_MSG_SNAP_PUSH)
        return 2;
    if (h.type != HI_MSG_TICK)
        return fail(c, -EPROTO, "the agent sent %s without being asked", type_name(h.type));
    return 1;
}

int cli_client_wait_closed(struct cli_client *c, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            /* Not fail(): the connection is still in order, only open. */
            snprintf(c->error, sizeof(c->error), "the agent did not close the connection within %d ms",
                     timeout_ms);
            return -ETIMEDOUT;
        }
        int rc = cli_client_pump(c, (int)left);
        if (rc == -ECONNRESET)
            return 0;
        if (rc < 0)
            return rc;
    }
}

int cli_client_copy_ticks(const struct cli_client *c, struct cli_profile *p)
{
    free(p->ticks);
    p->ticks = NULL;
    p->nticks = 0;
    if (!c->nticks)
        return 0;
    if (!(p->ticks = malloc(c->nticks * sizeof(*p->ticks))))
        return -ENOMEM;
    memcpy(p->ticks, c->ticks, c->nticks * sizeof(*p->ticks));
    p->nticks = c->nticks;
    return 0;
}

double cli_client_since_attach(const struct cli_client *c, uint64_t now_ns)
{
    return now_ns > c->hello.attach_ns ? (double)(now_ns - c->hello.attach_ns) / 1e9 : 0.0;
}

void cli_client_close(struct cli_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    free(c->rbuf);
    free(c->ticks);
    drop_pushed(c);
    int keep_timeout = c->timeout_ms;
    cli_client_init(c);
    c->timeout_ms = keep_timeout;
}
