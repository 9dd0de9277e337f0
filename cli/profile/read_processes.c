/* read_processes.c - the "processes" member of a JSON profile read back
 * (cli/report/processes.c writes it; docs/JSON.md). */
#include "cli/profile/read_processes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/read.h"

#define MAX_PROCESSES 100000u /* more than any service runs */

static const struct cli_json_node *member(const struct cli_json_doc *d, const struct cli_json_node *o, const char *k)
{
    return o && o->type == CLI_JSON_OBJECT ? cli_json_get(d, o, k) : NULL;
}

/* A u64 member: absent or null leaves *v alone; anything else must fit. */
static bool opt_u64(const struct cli_json_doc *d, const struct cli_json_node *o, const char *k, uint64_t *v)
{
    const struct cli_json_node *n = member(d, o, k);
    return !n || n->type == CLI_JSON_NULL || cli_json_u64(d, n, v);
}

static bool opt_i32(const struct cli_json_doc *d, const struct cli_json_node *o, const char *k, int32_t lo, int32_t *v)
{
    const struct cli_json_node *n = member(d, o, k);
    int64_t x;
    if (!n || n->type == CLI_JSON_NULL)
        return true;
    if (!cli_json_i64(d, n, &x) || x < lo || x > INT32_MAX)
        return false;
    *v = (int32_t)x;
    return true;
}

static bool opt_double(const struct cli_json_doc *d, const struct cli_json_node *o, const char *k, double *v)
{
    const struct cli_json_node *n = member(d, o, k);
    return !n || n->type == CLI_JSON_NULL || (cli_json_double(d, n, v) && *v >= 0 && *v < 1e9);
}

static int opt_str(const struct cli_json_doc *d, const struct cli_json_node *o, const char *k, char **out)
{
    const struct cli_json_node *n = member(d, o, k);
    *out = NULL;
    if (!n || n->type == CLI_JSON_NULL)
        return 0;
    const char *s = cli_json_str(d, n);
    if (!s)
        return -EBADMSG;
    if (s[0] && !(*out = strdup(s)))
        return -ENOMEM;
    return 0;
}

static int read_one(const struct cli_json_doc *d, const struct cli_json_node *o, struct cli_process *c)
{
    int err;
    c->attach_ms = -1;
    if (o->type != CLI_JSON_OBJECT || !member(d, o, "pid") || !opt_i32(d, o, "pid", 1, &c->pid) ||
        !opt_i32(d, o, "ppid", 0, &c->ppid) || !opt_double(d, o, "attach_ms", &c->attach_ms) ||
        !opt_u64(d, o, "rss_bytes", &c->rss_bytes) || !opt_u64(d, o, "rate", &c->rate) ||
        !opt_u64(d, o, "attach_ns", &c->attach_ns) || !opt_u64(d, o, "snapshot_ns", &c->snapshot_ns) ||
        !opt_double(d, o, "duration_s", &c->duration_s))
        return -EBADMSG;
    const struct cli_json_node *sd = member(d, o, "started_during_session");
    if (sd && sd->type != CLI_JSON_BOOL && sd->type != CLI_JSON_NULL)
        return -EBADMSG;
    c->started_during_session = sd && sd->b;
    const struct cli_json_node *t = member(d, o, "totals");
    if (t && t->type != CLI_JSON_OBJECT && t->type != CLI_JSON_NULL)
        return -EBADMSG;
    if (!opt_u64(d, t, "exact_alloc_bytes", &c->totals.exact_alloc_bytes) ||
        !opt_u64(d, t, "exact_alloc_calls", &c->totals.exact_alloc_calls) ||
        !opt_u64(d, t, "exact_free_bytes", &c->totals.exact_free_bytes) ||
        !opt_u64(d, t, "exact_free_calls", &c->totals.exact_free_calls) ||
        !opt_u64(d, t, "live_bytes", &c->totals.est_live_bytes) ||
        !opt_u64(d, t, "alloc_bytes", &c->totals.est_alloc_bytes))
        return -EBADMSG;
    const struct cli_json_node *x = member(d, o, "exit");
    if (x && x->type == CLI_JSON_OBJECT) {
        int32_t sig = 0, code = 0;
        if (!opt_i32(d, x, "signal", 0, &sig) || !opt_i32(d, x, "exit_code", 0, &code) || sig > 128 || code > 255)
            return -EBADMSG;
        const struct cli_json_node *sn = member(d, x, "signal"), *cn = member(d, x, "exit_code");
        c->have_exit = true;
        c->exit.stacks = true;
        c->exit.status_known = (sn && sn->type != CLI_JSON_NULL) || (cn && cn->type != CLI_JSON_NULL);
        c->exit.signal = sig;
        c->exit.exit_code = code;
    } else if (x && x->type != CLI_JSON_NULL) {
        return -EBADMSG;
    }
    if ((err = opt_str(d, o, "comm", &c->comm)) || (err = opt_str(d, o, "exe", &c->exe)))
        return err;
    return 0;
}

int cli_profile_read_processes(const struct cli_json_doc *d, const struct cli_json_node *a, struct cli_profile *p,
                               char *why, size_t whylen)
{
    if (!a || a->type == CLI_JSON_NULL)
        return 0; /* written before issue 28 */
    if (a->type != CLI_JSON_ARRAY || a->count > MAX_PROCESSES)
        return cli_profile_read_bad(why, whylen, "\"processes\" is not an array of at most %u", MAX_PROCESSES);
    if (!a->count)
        return 0;
    if (!(p->processes = calloc(a->count, sizeof(*p->processes))))
        return -ENOMEM;
    for (const struct cli_json_node *o = cli_json_first(d, a); o; o = cli_json_next(d, o)) {
        struct cli_process *c = &p->processes[p->nprocesses++];
        int err = read_one(d, o, c);
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
