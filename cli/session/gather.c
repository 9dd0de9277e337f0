/* gather.c - one report of every process of a session (gather.h). */
#include "cli/session/gather.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/link/fill.h"
#include "cli/process/proc.h"
#include "cli/profile/merge.h"
#include "cli/symbolize/symbolize.h"
#include "injector/target.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct snap_job {
    struct cli_session *s;
    struct cli_profile *p;   /* one per target, by index */
    bool *have;
};

static void snap_one(struct cli_target *t, void *arg)
{
    struct snap_job *j = arg;
    size_t i = (size_t)(t - j->s->targets);
    if (cli_client_snapshot(&t->link, &j->p[i]) == 0)
        j->have[i] = true;
    else
        t->code = cli_session_request_failed(t, "snapshot");
}

/* The lines of a maps text that map code (perms with 'x'): processes
 * forked from one master have the same ones at the same addresses, and
 * their program counters mean the same code. Malloc'd, or NULL. */
static char *code_layout(const char *maps, size_t len, size_t *outlen)
{
    char *o = malloc(len + 1);
    size_t n = 0;
    if (!o)
        return NULL;
    for (const char *l = maps, *end = maps + len; maps && l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        const char *le = nl ? nl + 1 : end;
        const char *sp = memchr(l, ' ', (size_t)(le - l));
        if (sp && le - sp > 4 && sp[3] == 'x') {
            memcpy(o + n, l, (size_t)(le - l));
            n += (size_t)(le - l);
        }
        l = le;
    }
    *outlen = n;
    return o;
}

struct layout {
    char *code;
    size_t len;
    size_t first;            /* the profile whose maps stand for the layout */
    struct cli_symbolizer *sym;
};

/* Symbolizes every profile, one symbolizer per code layout: a profile
 * whose code is mapped as an earlier one's is symbolized with that one's
 * maps text, from that symbolizer's cache (the PCs already looked up cost
 * nothing), instead of reading the same files again. */
static int symbolize_all(struct cli_session *s, struct cli_profile *p, const bool *have,
                         struct cli_gather_stats *st)
{
    struct layout *ls = calloc(s->ntargets ? s->ntargets : 1, sizeof(*ls));
    size_t nl = 0;
    int rc = 0;
    if (!ls)
        return -ENOMEM;
    double t0 = now_ms();
    for (size_t i = 0; i < s->ntargets && rc == 0; i++) {
        if (!have[i])
            continue;
        size_t len = 0;
        char *code = code_layout(p[i].maps, p[i].maps_len, &len);
        if (!code) {
            rc = -ENOMEM;
            break;
        }
        struct layout *l = NULL;
        for (size_t k = 0; k < nl && !l; k++)
            if (ls[k].len == len && !memcmp(ls[k].code, code, len))
                l = &ls[k];
        if (l) {
            free(code);
            char *own = p[i].maps;
            size_t ownlen = p[i].maps_len;
            p[i].maps = p[l->first].maps;
            p[i].maps_len = p[l->first].maps_len;
            rc = cli_symbolizer_run(l->sym, &p[i]);
            p[i].maps = own;
            p[i].maps_len = ownlen;
            continue;
        }
        l = &ls[nl++];
        l->code = code;
        l->len = len;
        l->first = i;
        pid_t pid = s->targets[i].pid, via = inj_target_live_task(pid);
        if (!(l->sym = cli_symbolizer_new(via > 0 ? via : pid, cli_proc_same_mntns(pid)))) {
            rc = -ENOMEM;
            break;
        }
        rc = cli_symbolizer_run(l->sym, &p[i]);
    }
    st->layouts = nl;
    st->symbolize_ms = now_ms() - t0;
    for (size_t k = 0; k < nl; k++) {
        const char *first;
        unsigned nu = ls[k].sym ? cli_symbolizer_unreadable(ls[k].sym, &first) : 0;
        if (nu && !st->nunreadable)
            snprintf(st->unreadable, sizeof(st->unreadable), "%s", first);
        st->nunreadable += nu;
        cli_symbolizer_free(ls[k].sym);
        free(ls[k].code);
    }
    free(ls);
    return rc;
}

int cli_session_gather(struct cli_session *s, struct cli_profile *out, struct cli_gather_stats *st)
{
    struct cli_profile *p = calloc(s->ntargets ? s->ntargets : 1, sizeof(*p));
    bool *have = calloc(s->ntargets ? s->ntargets : 1, sizeof(*have));
    struct snap_job j = { s, p, have };
    int rc = 0;

    memset(st, 0, sizeof(*st));
    memset(out, 0, sizeof(*out));
    if (!p || !have) {
        free(p);
        free(have);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->ntargets; i++)
        st->asked += s->targets[i].state == CLI_TARGET_LINKED;
    double t0 = now_ms();
    cli_session_each(s, CLI_TARGET_LINKED, snap_one, &j);
    st->snapshot_ms = now_ms() - t0;

    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        if (!have[i])
            continue;
        struct cli_target *t = &s->targets[i];
        st->taken++;
        p[i].pid = t->pid; /* the pid the user knows (not the one in its namespace) */
        cli_fill_from_proc(t->pid, &p[i]);
        if (p[i].snapshot_ns && p[i].snapshot_ns < lo)
            lo = p[i].snapshot_ns;
        if (p[i].snapshot_ns > hi)
            hi = p[i].snapshot_ns;
    }
    st->spread_ms = hi >= lo && lo != UINT64_MAX ? (double)(hi - lo) / 1e6 : 0;
    if (!st->taken) {
        rc = -ENOENT;
        goto out;
    }
    if ((rc = symbolize_all(s, p, have, st)) < 0)
        goto out;
    /* Each process named, then the snapshots taken in order. */
    struct cli_profile *in = p;
    size_t n = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        if (!have[i])
            continue;
        const struct cli_target *t = &s->targets[i];
        cli_profile_sort(&p[i]);
        if ((rc = cli_profile_set_self(&p[i], t->comm[0] && strcmp(t->comm, "?") ? t->comm : NULL, NULL, t->ppid,
                                       t->ours || t->attach_ms > 0 ? t->attach_ms : -1)) < 0)
            goto out;
        if (n != i)
            in[n] = p[i], memset(&p[i], 0, sizeof(p[i]));
        have[i] = false;
        n++;
    }
    rc = cli_profile_merge(in, n, NULL, stderr, out);
    free(p);
    free(have);
    return rc;
out:
    for (size_t i = 0; i < s->ntargets; i++)
        if (have[i])
            cli_profile_free(&p[i]);
    free(p);
    free(have);
    return rc;
}
