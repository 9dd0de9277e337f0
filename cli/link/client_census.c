/* client_census.c - the census messages: PREP/READY/REGS/REQ, then the
 * groups and roots up to CENSUS_END, into a struct cli_census. */
#include "cli/link/client.h"

#include "cli/census/census.h"
#include "cli/link/client_wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void take_census_end(const struct cli_client *c, struct cli_census *out)
{
    memcpy(&out->end, c->buf, sizeof(out->end));
    cli_client_clean_string(out->end.why, sizeof(out->end.why));
}

/* With hooks: PREP, then READY (or END: no census), the threads held and
 * their registers sent, REQ. */
static int census_start(struct cli_client *c, struct cli_census *out, const struct cli_census_hooks *hooks,
                        bool *ended)
{
    if (!hooks)
        return cli_client_send(c, HI_MSG_CENSUS_REQ, NULL, 0);
    struct hi_msg_header h;
    int rc = cli_client_send(c, HI_MSG_CENSUS_PREP, hooks->layout, hooks->layout ? sizeof(*hooks->layout) : 0);
    if (rc == 0)
        rc = cli_client_recv(c, &h, c->timeout_ms, false);
    if (rc < 0)
        return rc;
    if (h.type == HI_MSG_CENSUS_END && h.length == sizeof(struct hi_census_end)) {
        take_census_end(c, out);
        *ended = true;
        return 0;
    }
    if (h.type != HI_MSG_CENSUS_READY || h.length != sizeof(struct hi_census_ready))
        return cli_client_fail(c, -EPROTO, "the agent answered a census with %s (%u bytes)",
                    cli_client_type_name(h.type) ? cli_client_type_name(h.type) : "?", h.length);
    struct hi_census_ready r;
    memcpy(&r, c->buf, sizeof(r));
    const struct hi_census_regs *regs = NULL;
    size_t n = 0;
    int wait_ms = hooks->ready(hooks->arg, r.agent_tid, &regs, &n);
    if (wait_ms <= 0 || wait_ms > hooks->fork_wait_ms)
        wait_ms = hooks->fork_wait_ms;
    int64_t fork_deadline = cli_client_now_ms() + wait_ms; /* the send counts too */
    /* 28 threads a message (one a message, the agent took 1.2 s to read
     * 10,001 of them while the threads were held: two reads and two looks
     * at its seccomp filters a message). */
    for (size_t i = 0; i < n && rc == 0; i += HI_CENSUS_REGS_PER_MSG) {
        size_t k = n - i < HI_CENSUS_REGS_PER_MSG ? n - i : HI_CENSUS_REGS_PER_MSG;
        rc = cli_client_send(c, HI_MSG_CENSUS_REGS, &regs[i], (uint32_t)(k * sizeof(regs[0])));
    }
    if (rc == 0)
        rc = cli_client_send(c, HI_MSG_CENSUS_REQ, NULL, 0);
    if (rc < 0 || !n) {
        hooks->forked(hooks->arg, false); /* no FORKED comes without registers */
        return rc;
    }
    /* The threads are held until FORKED: wait for it at most wait_ms
     * (whatever comes first is read by the caller's loop). */
    int pr;
    do {
        int64_t left = fork_deadline - cli_client_now_ms();
        pr = left > 0 ? cli_client_wait_readable(c, (int)left) : 0;
    } while (pr == -EINTR);
    if (pr <= 0)
        hooks->forked(hooks->arg, pr == 0); /* the bound came first */
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
        if ((rc = cli_client_recv(c, &h, c->timeout_ms, false)) < 0)
            break;
        if ((bytes += sizeof(h) + h.length) > CLI_CLIENT_MAX_CENSUS_BYTES) {
            rc = cli_client_fail(c, -EPROTO, "the agent's census is larger than %u MiB, the bound" PAST_BOUND,
                      CLI_CLIENT_MAX_CENSUS_BYTES >> 20);
            break;
        }
        if (h.type == HI_MSG_CENSUS_FORKED && hooks) {
            hooks->forked(hooks->arg, false);
        } else if (h.type == HI_MSG_CENSUS_GROUP && h.length == sizeof(struct hi_census_group)) {
            struct hi_census_group g;
            memcpy(&g, c->buf, sizeof(g));
            if (cli_census_add_group(out, &g) < 0)
                rc = cli_client_fail(c, -ENOMEM, "too many census groups from the agent");
        } else if (h.type == HI_MSG_CENSUS_ROOT && h.length == sizeof(struct hi_census_root)) {
            struct hi_census_root r;
            memcpy(&r, c->buf, sizeof(r));
            cli_client_clean_string(r.thread, sizeof(r.thread));
            if (cli_census_add_root(out, &r) < 0)
                rc = cli_client_fail(c, -ENOMEM, "too many census roots from the agent");
        } else if (h.type == HI_MSG_CENSUS_PYTHON && h.length == sizeof(struct hi_census_python)) {
            struct hi_census_python py;
            memcpy(&py, c->buf, sizeof(py));
            cli_client_clean_string(py.why, sizeof(py.why));
            if (cli_census_set_python(out, &py) < 0)
                rc = cli_client_fail(c, -EPROTO, "a second Python section in one census");
        } else if (h.type == HI_MSG_CENSUS_PYTYPE && h.length == sizeof(struct hi_census_pytype)) {
            struct hi_census_pytype t;
            memcpy(&t, c->buf, sizeof(t));
            cli_client_clean_string(t.name, sizeof(t.name));
            if (cli_census_add_pytype(out, &t) < 0)
                rc = cli_client_fail(c, -EPROTO, "a Python type outside the census's Python section, or too many");
        } else if (h.type == HI_MSG_CENSUS_END && h.length == sizeof(struct hi_census_end)) {
            take_census_end(c, out);
            break;
        } else {
            rc = cli_client_fail(c, -EPROTO, "the agent sent %s (%u bytes) in the middle of a census",
                      cli_client_type_name(h.type) ? cli_client_type_name(h.type) : "?", h.length);
        }
    }
    if (hooks)
        hooks->forked(hooks->arg, false); /* never leave a thread held */
    c->timeout_ms = saved;
    return rc;
}
