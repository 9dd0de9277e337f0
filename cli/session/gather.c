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
#include "common/maps_line.h"
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
    if (cli_client_snapshot(&t->link, &j->p[i]) == 0) {
        j->have[i] = true;
        /* its timeline (a watched session); out of memory: without it */
        if (t->watching && cli_client_copy_ticks(&t->link, &j->p[i]) < 0)
            j->p[i].nticks = 0;
    } else
        t->code = cli_session_request_failed(t, "snapshot");
}

/* One line of a maps text that matters to symbolization: executable
 * memory, and every mapping of a file that has an executable one (a
 * module: its load base is its offset-0 mapping). Other files (a shared
 * memory segment, a data file) differ from process to process and never
 * hold a program counter. */
struct code_line {
    uint64_t start, end;
    const char *text;        /* the line, into its profile's maps */
    size_t len;              /* without the newline */
    const char *path;        /* into text; NULL for anonymous memory */
    size_t pathlen;
    bool exec;
};

/* The code lines of one maps text into *out (malloc'd). 0 or -ENOMEM. */
static int code_lines(const char *maps, size_t len, struct code_line **out, size_t *n)
{
    size_t cap = 64, all = 0;
    *n = 0;
    if (!(*out = malloc(cap * sizeof(**out))))
        return -ENOMEM;
    struct hi_maps_lines it = hi_maps_lines_of(maps, len);
    const char *l, *le;
    while (maps && hi_maps_lines_next(&it, &l, &le)) {
        struct hi_maps_line m;
        bool file = false;
        if (!hi_maps_line_parse(l, le, &m))
            continue;
        file = m.path && m.path[0] == '/';
        if (!file && m.perms[2] != 'x')
            continue;
        if (all == cap) {
            void *np = realloc(*out, cap * 2 * sizeof(**out));
            if (!np)
                return -ENOMEM;
            *out = np;
            cap *= 2;
        }
        (*out)[all++] = (struct code_line){ m.start, m.end, l, (size_t)(le - l), file ? m.path : NULL,
                                            file ? m.pathlen : 0, m.perms[2] == 'x' };
    }
    /* Keep the files that are modules (an executable mapping of the same
     * path) and executable anonymous memory. The executable file mappings
     * are moved to the front first: there are few of them (one or two per
     * module) while data files can be thousands. */
    size_t nexec = 0;
    for (size_t i = 0; i < all; i++)
        if ((*out)[i].exec && (*out)[i].path) {
            struct code_line t = (*out)[nexec];
            (*out)[nexec++] = (*out)[i];
            (*out)[i] = t;
        }
    *n = nexec;
    for (size_t i = nexec; i < all; i++) {
        struct code_line *c = &(*out)[i];
        bool keep = c->exec;
        for (size_t k = 0; k < nexec && !keep && c->path; k++)
            keep = (*out)[k].pathlen == c->pathlen && !memcmp((*out)[k].path, c->path, c->pathlen);
        if (keep)
            (*out)[(*n)++] = *c;
    }
    return 0;
}

/* Processes whose code is mapped compatibly: every line of each is, in
 * all the others, either the same line or an address range that holds
 * nothing (a pre-fork server's workers: their master's mappings, plus
 * the modules each loaded on its own, at addresses the others left free).
 * One maps text of all their lines symbolizes every one of them, so one
 * symbolizer reads each file once for all. */
struct layout {
    struct code_line *lines;
    size_t n, cap;
    char *maps;              /* the union as a maps text, sorted by address */
    size_t maps_len;
    struct cli_symbolizer *sym;
    pid_t pid;               /* a live process of the group: its /proc/PID/root */
    bool gone;               /* pid exited (only processes that did are in it) */
};

/* Whether lines l[0..n) fit into layout g: each is in g already or
 * overlaps nothing of g. */
static bool fits(const struct layout *g, const struct code_line *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < g->n; k++) {
            const struct code_line *a = &l[i], *b = &g->lines[k];
            if (a->end <= b->start || b->end <= a->start)
                continue;
            if (a->start != b->start || a->end != b->end || a->len != b->len || memcmp(a->text, b->text, a->len))
                return false;
        }
    return true;
}

static int join(struct layout *g, const struct code_line *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool have = false;
        for (size_t k = 0; k < g->n && !have; k++)
            have = g->lines[k].start == l[i].start && g->lines[k].end == l[i].end;
        if (have)
            continue;
        if (g->n == g->cap) {
            size_t nc = g->cap ? g->cap * 2 : 64;
            void *np = realloc(g->lines, nc * sizeof(*g->lines));
            if (!np)
                return -ENOMEM;
            g->lines = np;
            g->cap = nc;
        }
        g->lines[g->n++] = l[i];
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct code_line *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int layout_text(struct layout *g)
{
    size_t len = 0;
    qsort(g->lines, g->n, sizeof(*g->lines), by_start);
    for (size_t i = 0; i < g->n; i++)
        len += g->lines[i].len + 1;
    if (!(g->maps = malloc(len + 1)))
        return -ENOMEM;
    for (size_t i = 0; i < g->n; i++) {
        memcpy(g->maps + g->maps_len, g->lines[i].text, g->lines[i].len);
        g->maps_len += g->lines[i].len;
        g->maps[g->maps_len++] = '\n';
    }
    g->maps[g->maps_len] = '\0';
    return 0;
}

/* Symbolizes every profile, one symbolizer per layout (above): each
 * profile is symbolized against its layout's maps text, so the program
 * counters looked up for one process cost nothing for the next. */
static int symbolize_all(struct cli_session *s, struct cli_profile *p, const bool *have, const bool *ended,
                         struct cli_gather_stats *st)
{
    size_t n = s->ntargets ? s->ntargets : 1, nl = 0;
    struct layout *ls = calloc(n, sizeof(*ls));
    size_t *of = calloc(n, sizeof(*of));
    struct code_line **lines = calloc(n, sizeof(*lines));
    size_t *nlines = calloc(n, sizeof(*nlines));
    int rc = ls && of && lines && nlines ? 0 : -ENOMEM;
    double t0 = now_ms();
    for (size_t i = 0; i < s->ntargets && rc == 0; i++) {
        if (!have[i])
            continue;
        if ((rc = code_lines(p[i].maps, p[i].maps_len, &lines[i], &nlines[i])) < 0)
            break;
        size_t g = 0;
        while (g < nl && !fits(&ls[g], lines[i], nlines[i]))
            g++;
        if (g == nl) {
            ls[nl].pid = s->targets[i].pid;
            ls[nl++].gone = ended[i];
        } else if (ls[g].gone && !ended[i]) {
            ls[g].pid = s->targets[i].pid; /* read the files through a live one */
            ls[g].gone = false;
        }
        of[i] = g;
        rc = join(&ls[g], lines[i], nlines[i]);
    }
    for (size_t g = 0; g < nl && rc == 0; g++) {
        pid_t via = ls[g].gone ? 0 : inj_target_live_task(ls[g].pid);
        /* Gone: its files are taken to be where the cli sees them. */
        if ((rc = layout_text(&ls[g])) == 0 &&
            !(ls[g].sym = cli_symbolizer_new(via > 0 ? via : ls[g].pid,
                                             ls[g].gone ? 1 : cli_proc_same_mntns(ls[g].pid))))
            rc = -ENOMEM;
    }
    for (size_t i = 0; i < s->ntargets && rc == 0; i++) {
        if (!have[i])
            continue;
        struct layout *g = &ls[of[i]];
        char *own = p[i].maps;
        size_t ownlen = p[i].maps_len;
        p[i].maps = g->maps;
        p[i].maps_len = g->maps_len;
        rc = cli_symbolizer_run(g->sym, &p[i]);
        p[i].maps = own;
        p[i].maps_len = ownlen;
    }
    st->layouts = nl;
    st->symbolize_ms = now_ms() - t0;
    for (size_t g = 0; ls && g < nl; g++) {
        const char *first;
        unsigned nu = ls[g].sym ? cli_symbolizer_unreadable(ls[g].sym, &first) : 0;
        if (nu && !st->nunreadable)
            snprintf(st->unreadable, sizeof(st->unreadable), "%s", first);
        st->nunreadable += nu;
        cli_symbolizer_free(ls[g].sym);
        free(ls[g].lines);
        free(ls[g].maps);
    }
    for (size_t i = 0; lines && i < s->ntargets; i++)
        free(lines[i]);
    free(ls);
    free(of);
    free(lines);
    free(nlines);
    return rc;
}

int cli_session_gather(struct cli_session *s, struct cli_profile *out, struct cli_gather_stats *st)
{
    struct cli_profile *p = calloc(s->ntargets ? s->ntargets : 1, sizeof(*p));
    bool *have = calloc(s->ntargets ? s->ntargets : 1, sizeof(*have));
    struct snap_job j = { s, p, have };
    bool *ended = NULL;
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
    /* The processes that exited meanwhile: their snapshots at exit. */
    ended = calloc(s->ntargets ? s->ntargets : 1, sizeof(*ended));
    if (!ended) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < s->ntargets; i++) {
        struct cli_target *t = &s->targets[i];
        if (have[i] || !t->last)
            continue;
        p[i] = *t->last;
        free(t->last);
        t->last = NULL;
        have[i] = ended[i] = true;
        st->ended++;
    }

    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        if (!have[i])
            continue;
        struct cli_target *t = &s->targets[i];
        p[i].pid = t->pid; /* the pid the user knows (not the one in its namespace) */
        if (ended[i])
            continue; /* gone: not part of the spread of this snapshot's times */
        st->taken++;
        cli_fill_from_proc(t->pid, &p[i]);
        if (p[i].snapshot_ns && p[i].snapshot_ns < lo)
            lo = p[i].snapshot_ns;
        if (p[i].snapshot_ns > hi)
            hi = p[i].snapshot_ns;
    }
    st->spread_ms = hi >= lo && lo != UINT64_MAX ? (double)(hi - lo) / 1e6 : 0;
    if (!st->taken && !st->ended) {
        rc = -ENOENT;
        goto out;
    }
    if ((rc = symbolize_all(s, p, have, ended, st)) < 0)
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
        p[i].processes[0].started_during_session = t->late;
        if (ended[i]) {
            p[i].processes[0].have_exit = true;
            p[i].processes[0].exit = t->exit;
        }
        if (n != i)
            in[n] = p[i], memset(&p[i], 0, sizeof(p[i]));
        have[i] = false;
        n++;
    }
    rc = cli_profile_merge(in, n, NULL, stderr, out);
    free(p);
    free(have);
    free(ended);
    return rc;
out:
    for (size_t i = 0; i < s->ntargets; i++)
        if (have[i])
            cli_profile_free(&p[i]);
    free(p);
    free(have);
    free(ended);
    return rc;
}
