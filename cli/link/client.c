/* client.c - the transport: connect to the agent, frame and validate its
 * messages, the requests answered by an ACK. Each message family is decoded
 * in its own file: client_stacks.c (snapshots), client_census.c,
 * client_memory.c (allocator figures, trim), client_ticks.c.
 *
 * Byte order: the protocol is little-endian and heapinject only runs on
 * little-endian machines (x86-64, aarch64), so packed structs are memcpy'd
 * as they are, always after the length has been checked. */
#include "cli/link/client.h"

#include "cli/link/client_wire.h"

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

const char *cli_client_type_name(unsigned type)
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
    case HI_MSG_SNAP_PYMALLOC: return "SNAP_PYMALLOC";
    case HI_MSG_SNAP_STACKS: return "SNAP_STACKS";
    case HI_MSG_SNAP_PYTHON: return "SNAP_PYTHON";
    case HI_MSG_SNAP_PYCODE: return "SNAP_PYCODE";
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

int cli_client_fail(struct cli_client *c, int err, const char *fmt, ...)
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

int64_t cli_client_now_ms(void)
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
        return cli_client_fail(c, -ENOMEM, "out of memory");
    if (!c->rbuf && !(c->rbuf = malloc(CLI_CLIENT_RBUF)))
        return cli_client_fail(c, -ENOMEM, "out of memory");
    c->rpos = c->rlen = 0;
    return 0;
}

/* Waits up to timeout_ms for something to read: what is buffered counts. */
int cli_client_wait_readable(struct cli_client *c, int timeout_ms)
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
        return cli_client_fail(c, -ENAMETOOLONG, "socket path %s is too long", path);
    memcpy(sa.sun_path, path, strlen(path) + 1);

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cli_client_fail(c, -errno, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(fd);
        return cli_client_fail(c, -e, "connect %s: %s", path, strerror(e));
    }
    if (expect_pid > 0) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0 &&
            cred.pid != expect_pid) {
            close(fd);
            return cli_client_fail(c, -ESRCH, "socket %s is served by pid %d, not by pid %d", path,
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
                return cli_client_fail(c, -ECONNRESET, "the agent closed the connection");
            return cli_client_fail(c, -errno, "send: %s", strerror(errno));
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
        int64_t left = deadline - cli_client_now_ms();
        if (left < 0)
            left = 0;
        int pr = cli_client_wait_readable(c, (int)(left > 0x7fffffff ? 0x7fffffff : left));
        if (pr < 0) {
            if (pr == -EINTR)
                continue;
            return cli_client_fail(c, pr, "poll: %s", strerror(-pr));
        }
        if (pr == 0)
            return cli_client_fail(c, -ETIMEDOUT, "the agent did not answer within %d ms", c->timeout_ms);
        ssize_t n = read(c->fd, c->rbuf, CLI_CLIENT_RBUF);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno == ECONNRESET)
                n = 0;
            else
                return cli_client_fail(c, -errno, "read: %s", strerror(errno));
        }
        if (n == 0) {
            if (!mid_msg && got == 0)
                return cli_client_fail(c, -ECONNRESET, "the agent closed the connection");
            return cli_client_fail(c, -EPROTO, "truncated message from the agent (connection closed after %zu of %zu bytes)",
                        got, len);
        }
        c->rpos = 0;
        c->rlen = (size_t)n;
    }
    return 0;
}

int cli_client_send(struct cli_client *c, uint16_t type, const void *body, uint32_t len)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, len };
    unsigned char msg[sizeof(h) + HI_MAX_REQUEST_BODY];
    if (c->fd < 0 || c->broken)
        return cli_client_fail(c, -ENOTCONN, "not connected to the agent");
    if (len > HI_MAX_REQUEST_BODY)
        return cli_client_fail(c, -EMSGSIZE, "request too long");
    memcpy(msg, &h, sizeof(h));
    if (len)
        memcpy(msg + sizeof(h), body, len);
    /* One send: the agent never sees half a request from us. */
    return write_all(c, msg, sizeof(h) + len);
}

/* Reads one message into h and c->buf, after checking its framing. TICK,
 * SNAP_PUSH and ERROR are handled here: a TICK is stored, a pushed snapshot
 * read whole and kept, and, unless the caller asked for them (want_tick),
 * the next message is read. */
int cli_client_recv(struct cli_client *c, struct hi_msg_header *h, int timeout_ms, bool want_tick)
{
    if (c->fd < 0 || c->broken)
        return cli_client_fail(c, -ENOTCONN, "not connected to the agent");
    for (;;) {
        int64_t deadline = cli_client_now_ms() + timeout_ms;
        int rc = read_all(c, h, sizeof(*h), deadline, false);
        if (rc < 0)
            return rc;
        if (h->magic != HI_PROTO_MAGIC)
            return cli_client_fail(c, -EPROTO, "garbage from the agent (bad magic 0x%08x): is this a heapinject socket?",
                        h->magic);
        if (h->version != HI_PROTO_VERSION)
            return cli_client_fail(c, -EPROTO,
                        "the agent speaks protocol version %u, this heapinject speaks %u: "
                        "use the heapinject that attached it, or detach it first",
                        h->version, HI_PROTO_VERSION);
        const char *name = cli_client_type_name(h->type);
        if (!name || (h->type < HI_MSG_ACK && h->type != HI_MSG_HELLO))
            return cli_client_fail(c, -EPROTO, "unexpected message type %u from the agent", h->type);
        if (h->length > HI_MAX_RECORD_BODY)
            return cli_client_fail(c, -EPROTO, "oversized %s message from the agent (%u bytes, the bound is %u)",
                        name, h->length, HI_MAX_RECORD_BODY);
        /* The body must arrive soon after its header. */
        rc = read_all(c, c->buf, h->length, cli_client_now_ms() + c->timeout_ms, true);
        if (rc < 0)
            return rc;
        if (h->type == HI_MSG_ERROR) {
            struct hi_error e;
            if (h->length != sizeof(e))
                return cli_client_fail(c, -EPROTO, "malformed ERROR message from the agent (%u bytes)", h->length);
            memcpy(&e, c->buf, sizeof(e));
            e.message[sizeof(e.message) - 1] = '\0';
            for (char *s = e.message; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
                    *s = '?'; /* never print control characters from the wire */
            c->remote_code = e.code;
            return cli_client_fail(c, -EREMOTEIO, "the agent reports: %s%s%s", e.message[0] ? e.message : "an error",
                        e.code < 0 && e.code > -4096 ? ": " : "",
                        e.code < 0 && e.code > -4096 ? strerror(-e.code) : "");
        }
        if (h->type == HI_MSG_TICK) {
            struct hi_tick t;
            struct hi_tick_top top = { 0, 0, { { 0, 0, 0, 0 } } };
            struct hi_tick_kept kept = { 0, 0, { { 0, 0, 0 } } };
            /* the TICK alone (an older agent), or with the top risers,
             * and from a newer agent the risers it keeps after them */
            if (h->length != sizeof(t) && h->length < sizeof(t) + sizeof(top))
                return cli_client_fail(c, -EPROTO, "malformed TICK message from the agent (%u bytes, expected %zu)",
                            h->length, sizeof(t));
            memcpy(&t, c->buf, sizeof(t));
            if (h->length > sizeof(t)) {
                memcpy(&top, c->buf + sizeof(t), sizeof(top));
                if (top.ntop > HI_TICK_TOP)
                    return cli_client_fail(c, -EPROTO, "malformed TICK message from the agent (%u top stacks)",
                                top.ntop);
            }
            if (h->length >= sizeof(t) + sizeof(top) + sizeof(kept)) {
                memcpy(&kept, c->buf + sizeof(t) + sizeof(top), sizeof(kept));
                if (kept.nkept > HI_TICK_KEPT)
                    return cli_client_fail(c, -EPROTO, "malformed TICK message from the agent (%u kept stacks)",
                                kept.nkept);
            }
            if ((rc = cli_client_store_tick(c, &t, &top, &kept)) < 0)
                return rc;
            if (want_tick)
                return 0;
            continue;
        }
        if (h->type == HI_MSG_SNAP_PUSH) {
            if ((rc = cli_client_recv_pushed(c, h->length)) < 0)
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
int cli_client_expect(struct cli_client *c, uint16_t want, void *out, uint32_t len)
{
    struct hi_msg_header h;
    int rc = cli_client_recv(c, &h, c->timeout_ms, false);
    if (rc < 0)
        return rc;
    if (h.type != want)
        return cli_client_fail(c, -EPROTO, "the agent sent %s where %s was expected", cli_client_type_name(h.type),
                    cli_client_type_name(want));
    if (h.length != len)
        return cli_client_fail(c, -EPROTO, "malformed %s message from the agent (%u bytes, expected %u)",
                    cli_client_type_name(want), h.length, len);
    if (out)
        memcpy(out, c->buf, len);
    return 0;
}

int cli_client_hello(struct cli_client *c)
{
    struct hi_hello_client hc = { HI_PROTO_VERSION };
    int rc = cli_client_send(c, HI_MSG_HELLO, &hc, sizeof(hc));
    if (rc < 0)
        return rc;
    if ((rc = cli_client_expect(c, HI_MSG_HELLO, &c->hello, sizeof(c->hello))) < 0)
        return rc;
    if (c->hello.version != HI_PROTO_VERSION)
        return cli_client_fail(c, -EPROTO, "the agent speaks protocol version %u, this heapinject speaks %u",
                    c->hello.version, HI_PROTO_VERSION);
    return 0;
}

static int request_ack(struct cli_client *c, uint16_t type, const void *body, uint32_t len)
{
    struct hi_ack ack;
    int rc = cli_client_send(c, type, body, len);
    if (rc < 0)
        return rc;
    if ((rc = cli_client_expect(c, HI_MSG_ACK, &ack, sizeof(ack))) < 0)
        return rc;
    if (ack.type != type)
        return cli_client_fail(c, -EPROTO, "the agent acknowledged %s instead of %s",
                    cli_client_type_name(ack.type) ? cli_client_type_name(ack.type) : "an unknown request", cli_client_type_name(type));
    return 0;
}

int cli_client_set_rate(struct cli_client *c, uint64_t rate)
{
    struct hi_set_rate r = { rate };
    return request_ack(c, HI_MSG_SET_RATE, &r, sizeof(r));
}

int cli_client_watch(struct cli_client *c)
{
    /* Pushed snapshots (crash, memory pressure) carry Python frames and
     * pymalloc's state as asked ones do; an older agent ignores the body
     * and pushes native frames only, which are still read. */
    struct hi_snapshot_req req = { HI_SNAP_WANT_RUNTIME_FRAMES | HI_SNAP_WANT_PYMALLOC | HI_WATCH_WANT_TICK_TOP, 0 };
    return request_ack(c, HI_MSG_WATCH, &req, sizeof(req));
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
void cli_client_clean_string(char *s, size_t len)
{
    s[len - 1] = '\0';
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            *s = '?';
}

int cli_client_pump(struct cli_client *c, int timeout_ms)
{
    struct hi_msg_header h;
    if (c->fd < 0 || c->broken)
        return cli_client_fail(c, -ENOTCONN, "not connected to the agent");
    int pr = cli_client_wait_readable(c, timeout_ms);
    if (pr < 0)
        return pr == -EINTR ? 0 : cli_client_fail(c, pr, "poll: %s", strerror(-pr));
    if (pr == 0)
        return 0;
    int rc = cli_client_recv(c, &h, c->timeout_ms, true);
    if (rc < 0)
        return rc;
    if (h.type == HI_MSG_SNAP_PUSH)
        return 2;
    if (h.type != HI_MSG_TICK)
        return cli_client_fail(c, -EPROTO, "the agent sent %s without being asked", cli_client_type_name(h.type));
    return 1;
}

int cli_client_wait_closed(struct cli_client *c, int timeout_ms)
{
    int64_t deadline = cli_client_now_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - cli_client_now_ms();
        if (left <= 0) {
            /* Not cli_client_fail(): the connection is still in order, only open. */
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

void cli_client_close(struct cli_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    free(c->rbuf);
    free(c->ticks);
    cli_client_drop_pushed(c);
    int keep_timeout = c->timeout_ms;
    cli_client_init(c);
    c->timeout_ms = keep_timeout;
}
