/* read_processes.c - the "processes" member of a JSON profile read back
 * (cli/report/processes.c writes it; docs/JSON.md). */
#include "cli/profile/read_processes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/read.h"
#include "cli/util/json_value.h"

#define MAX_PROCESSES 100000u /* more than any service runs */

static const json_t *member(const json_t *o, const char *k)
{
    return json_is_object(o) ? json_object_get(o, k) : NULL;
}

/* A u64 member: absent or null leaves *v alone; anything else must fit. */
static bool opt_u64(const json_t *o, const char *k, uint64_t *v)
{
    const json_t *n = member(o, k);
    return !n || json_is_null(n) || cli_json_value_u64(n, v);
}

static bool opt_i32(const json_t *o, const char *k, int32_t lo, int32_t *v)
{
    const json_t *n = member(o, k);
    int64_t x;
    if (!n || json_is_null(n))
        return true;
    if (!cli_json_value_i64(n, &x) || x < lo || x > INT32_MAX)
        return false;
    *v = (int32_t)x;
    return true;
}

static bool opt_double(const json_t *o, const char *k, double *v)
{
    const json_t *n = member(o, k);
    return !n || json_is_null(n) || (cli_json_value_double(n, v) && *v >= 0 && *v < 1e9);
}

static int opt_str(const json_t *o, const char *k, char **out)
{
    const json_t *n = member(o, k);
    *out = NULL;
    if (!n || json_is_null(n))
        return 0;
    const char *s = json_string_value(n);
    if (!s)
        return -EBADMSG;
    if (s[0] && !(*out = strdup(s)))
        return -ENOMEM;
    return 0;
}

static int read_one(const json_t *o, struct cli_process *c)
{
    int err;
    c->attach_ms = -1;
    if (!json_is_object(o) || !member(o, "pid") || !opt_i32(o, "pid", 1, &c->pid) ||
        !opt_i32(o, "ppid", 0, &c->ppid) || !opt_double(o, "attach_ms", &c->attach_ms) ||
        !opt_u64(o, "rss_bytes", &c->rss_bytes) || !opt_u64(o, "rate", &c->rate) ||
        !opt_u64(o, "attach_ns", &c->attach_ns) || !opt_u64(o, "snapshot_ns", &c->snapshot_ns) ||
        !opt_double(o, "duration_s", &c->duration_s))
        return -EBADMSG;
    const json_t *sd = member(o, "started_during_session");
    if (sd && !json_is_boolean(sd) && !json_is_null(sd))
        return -EBADMSG;
    c->started_during_session = json_is_true(sd);
    const json_t *t = member(o, "totals");
    if (t && !json_is_object(t) && !json_is_null(t))
        return -EBADMSG;
    if (!opt_u64(t, "exact_alloc_bytes", &c->totals.exact_alloc_bytes) ||
        !opt_u64(t, "exact_alloc_calls", &c->totals.exact_alloc_calls) ||
        !opt_u64(t, "exact_free_bytes", &c->totals.exact_free_bytes) ||
        !opt_u64(t, "exact_free_calls", &c->totals.exact_free_calls) ||
        !opt_u64(t, "live_bytes", &c->totals.est_live_bytes) ||
        !opt_u64(t, "alloc_bytes", &c->totals.est_alloc_bytes))
        return -EBADMSG;
    const json_t *x = member(o, "exit");
    if (json_is_object(x)) {
        int32_t sig = 0, code = 0;
        if (!opt_i32(x, "signal", 0, &sig) || !opt_i32(x, "exit_code", 0, &code) || sig > 128 || code > 255)
            return -EBADMSG;
        const json_t *sn = member(x, "signal"), *cn = member(x, "exit_code");
        c->have_exit = true;
        c->exit.stacks = true;
        c->exit.status_known = (sn && !json_is_null(sn)) || (cn && !json_is_null(cn));
        c->exit.signal = sig;
        c->exit.exit_code = code;
        const json_t *at = member(x, "at_unix_s"), *ae = member(x, "snapshot_at_exit");
        if (at && !json_is_null(at) && !json_is_number(at))
            return -EBADMSG;
        c->exit.at_unix_s = at && json_is_number(at) ? json_number_value(at) : 0;
        c->exit.at_exit = ae && json_is_true(ae);
    } else if (x && !json_is_null(x)) {
        return -EBADMSG;
    }
    if ((err = opt_str(o, "comm", &c->comm)) || (err = opt_str(o, "exe", &c->exe)))
        return err;
    return 0;
}

int cli_profile_read_processes(const json_t *a, struct cli_profile *p,
                               char *why, size_t whylen)
{
    if (!a || json_is_null(a))
        return 0; /* written before issue 28 */
    if (!json_is_array(a) || json_array_size(a) > MAX_PROCESSES)
        return cli_profile_read_bad(why, whylen, "\"processes\" is not an array of at most %u", MAX_PROCESSES);
    if (!json_array_size(a))
        return 0;
    if (!(p->processes = calloc(json_array_size(a), sizeof(*p->processes))))
        return -ENOMEM;
    size_t idx;
    const json_t *o;
    json_array_foreach(a, idx, o) {
        struct cli_process *c = &p->processes[p->nprocesses++];
        int err = read_one(o, c);
        if (err == -EBADMSG)
            return cli_profile_read_bad(why, whylen, "process %zu: not an object with a \"pid\" and numbers, "
                                                     "strings and booleans where docs/JSON.md has them",
                                        p->nprocesses - 1);
        if (err)
            return err;
        for (size_t k = 0; k + 1 < p->nprocesses; k++)
            if (p->processes[k].pid == c->pid)
                return cli_profile_read_bad(why, whylen, "process %zu: pid %d is listed twice", p->nprocesses - 1,
                                            (int)c->pid);
    }
    return 0;
}
