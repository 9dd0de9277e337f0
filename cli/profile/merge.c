/* merge.c - one profile of several processes (cli/profile/merge.h). */
#include "cli/profile/merge.h"
#include "cli/profile/merge_ticks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/intern.h"

/* The executable of a maps text: the path of its first file mapping (the
 * kernel maps the executable first). Malloc'd, or NULL. */
static char *exe_of_maps(const char *maps, size_t len)
{
    const char *line = maps, *end = maps + len;
    while (maps && line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *slash = memchr(line, '/', (size_t)(le - line));
        if (slash) {
            size_t n = (size_t)(le - slash);
            static const char deleted[] = " (deleted)";
            if (n > sizeof(deleted) - 1 && !memcmp(le - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1))
                n -= sizeof(deleted) - 1;
            return strndup(slash, n);
        }
        line = le + 1;
    }
    return NULL;
}

static void fill_own(const struct cli_profile *p, struct cli_process *o)
{
    memset(o, 0, sizeof(*o));
    o->pid = p->pid;
    o->attach_ms = -1;
    o->rss_bytes = p->rss_bytes;
    o->rate = p->rate;
    o->attach_ns = p->attach_ns;
    o->snapshot_ns = p->snapshot_ns;
    o->duration_s = p->duration_s;
    o->totals = p->totals;
    o->have_exit = p->have_exit;
    o->exit = p->exit;
}

const struct cli_process *cli_profile_process_list(const struct cli_profile *p, size_t *n, struct cli_process *one)
{
    if (p->nprocesses) {
        *n = p->nprocesses;
        return p->processes;
    }
    fill_own(p, one);
    *n = 1;
    return one;
}

const struct cli_process *cli_profile_process_find(const struct cli_profile *p, int32_t pid)
{
    for (size_t i = 0; i < p->nprocesses; i++)
        if (p->processes[i].pid == pid)
            return &p->processes[i];
    return NULL;
}

int cli_profile_set_self(struct cli_profile *p, const char *comm, const char *exe, int32_t ppid, double attach_ms)
{
    struct cli_process *o = calloc(1, sizeof(*o));
    if (!o)
        return -ENOMEM;
    fill_own(p, o);
    o->ppid = ppid;
    o->attach_ms = attach_ms;
    o->comm = comm ? strdup(comm) : NULL;
    o->exe = exe ? strdup(exe) : exe_of_maps(p->maps, p->maps_len);
    if ((comm && !o->comm) || (exe && !o->exe)) {
        free(o->comm);
        free(o->exe);
        free(o);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->nprocesses; i++) {
        free(p->processes[i].comm);
        free(p->processes[i].exe);
    }
    free(p->processes);
    p->processes = o;
    p->nprocesses = 1;
    return 0;
}

/* Adds the u64 counters of struct b into a (structs that are runs of
 * uint64_t: hi_totals, hi_snap_hist, hi_snap_mmap, hi_snap_walks). */
static void add_u64s(void *a, const void *b, size_t size)
{
    for (size_t i = 0; i + sizeof(uint64_t) <= size; i += sizeof(uint64_t)) {
        uint64_t x, y;
        memcpy(&x, (const char *)a + i, sizeof(x));
        memcpy(&y, (const char *)b + i, sizeof(y));
        x += y;
        memcpy((char *)a + i, &x, sizeof(x));
    }
}

/* Copies process o (its strings too) to the end of out's list. */
static int add_process(struct cli_profile *out, const struct cli_process *o, size_t *cap)
{
    if (out->nprocesses == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct cli_process *np = realloc(out->processes, nc * sizeof(*np));
        if (!np)
            return -ENOMEM;
        out->processes = np;
        *cap = nc;
    }
    struct cli_process *d = &out->processes[out->nprocesses];
    *d = *o;
    d->comm = o->comm ? strdup(o->comm) : NULL;
    d->exe = o->exe ? strdup(o->exe) : NULL;
    out->nprocesses++;
    return (o->comm && !d->comm) || (o->exe && !d->exe) ? -ENOMEM : 0;
}

/* The frames of s, their strings re-interned into pool; s's program
 * counters move to d. */
static int move_stack(struct cli_stack *d, struct cli_stack *s, int32_t pid, struct cli_intern *pool)
{
    *d = *s;
    d->pid = s->pid ? s->pid : pid;
    d->frames = NULL;
    d->nframes = 0;
    d->shared_strings = true;
    s->pcs = NULL;
    s->npcs = 0;
    if (!s->nframes)
        return 0;
    if (!(d->frames = calloc(s->nframes, sizeof(*d->frames))))
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nframes; i++) {
        const struct cli_frame *f = &s->frames[i];
        struct cli_frame *g = &d->frames[d->nframes++];
        *g = *f;
        g->function = f->function ? (char *)cli_intern_str(pool, f->function) : NULL;
        g->module = f->module ? (char *)cli_intern_str(pool, f->module) : NULL;
        g->file = f->file ? (char *)cli_intern_str(pool, f->file) : NULL;
        if ((f->function && !g->function) || (f->module && !g->module) || (f->file && !g->file))
            return -ENOMEM;
    }
    return 0;
}

int cli_profile_copy_processes(struct cli_profile *dst, const struct cli_profile *src)
{
    size_t cap = 0;
    for (size_t i = 0; i < src->nprocesses; i++)
        if (add_process(dst, &src->processes[i], &cap) < 0)
            return -ENOMEM;
    dst->maps_differ = src->maps_differ;
    return 0;
}

static int cmp_process(const void *a, const void *b)
{
    const struct cli_process *x = a, *y = b;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Is input i an earlier snapshot of the session of a later input? */
static bool superseded(const struct cli_profile *in, size_t n, size_t i, size_t *by)
{
    const struct cli_profile *a = &in[i];
    if (a->nprocesses > 1 || !a->attach_ns)
        return false;
    for (size_t k = 0; k < n; k++) {
        const struct cli_profile *b = &in[k];
        if (k == i || b->nprocesses > 1 || b->pid != a->pid || b->attach_ns != a->attach_ns)
            continue;
        /* The later snapshot wins; of two equal ones, the last named. */
        if (b->snapshot_ns > a->snapshot_ns || (b->snapshot_ns == a->snapshot_ns && k > i)) {
            *by = k;
            return true;
        }
    }
    return false;
}

static int add_debug_hints(struct cli_profile *out, struct cli_profile *p)
{
    for (size_t i = 0; i < p->ndebug_hints; i++) {
        bool have = false;
        for (size_t k = 0; k < out->ndebug_hints && !have; k++)
            have = out->debug_hints[k].module && p->debug_hints[i].module &&
                   !strcmp(out->debug_hints[k].module, p->debug_hints[i].module);
        if (have)
            continue;
        struct cli_debug_hint *nh = realloc(out->debug_hints, (out->ndebug_hints + 1) * sizeof(*nh));
        if (!nh)
            return -ENOMEM;
        out->debug_hints = nh;
        nh[out->ndebug_hints++] = p->debug_hints[i]; /* moved */
        memset(&p->debug_hints[i], 0, sizeof(p->debug_hints[i]));
    }
    return 0;
}

/* The Python line of several processes (issue 29 item 5): the counts of
 * processes whose frames were read, summed while they are one version;
 * a process whose frames were not read (or another version) says why in
 * place of the sums, so a refusal is never hidden behind the others.
 * The code tables stay with each process: its frames are named already. */
static void add_python(struct cli_python *out, const struct cli_python *py)
{
    const struct hi_snap_python *a = &py->st;
    struct hi_snap_python *o = &out->st;
    if (!py->have || a->state == HI_PYTHON_NONE)
        return;
    if (!out->have || o->state == HI_PYTHON_NONE) {
        *o = *a;
        out->have = true;
        return;
    }
    if (o->state == HI_PYTHON_READ && a->state == HI_PYTHON_READ && o->minor == a->minor) {
        o->with_frames += a->with_frames;
        o->no_state += a->no_state;
        o->not_valid += a->not_valid;
        o->unnamed += a->unnamed;
        o->codes += a->codes;
        o->unplaced += a->unplaced;
        o->cut += a->cut;
        o->subinterp += a->subinterp;
    } else if (o->state == HI_PYTHON_READ) {
        uint32_t first = o->minor;
        *o = *a;
        if (o->state == HI_PYTHON_READ) {
            o->state = HI_PYTHON_UNREAD;
            snprintf(o->why, sizeof(o->why), "processes of Python 3.%u and 3.%u: no summed line", first, a->minor);
        }
    }
}

/* pymalloc's status of several processes: the first that was not sampled
 * (and why) wins over those that were. */
static void add_pymalloc(struct cli_profile *out, const struct cli_profile *p)
{
    if (!p->have_pymalloc)
        return;
    if (!out->have_pymalloc || (out->pymalloc.status > 0 && p->pymalloc.status <= 0))
        out->pymalloc = p->pymalloc;
    out->have_pymalloc = true;
}

int cli_profile_merge(struct cli_profile *in, size_t n, const char *const *names, FILE *warn,
                      struct cli_profile *out)
{
    size_t cap = 0, nstacks = 0, nthreads = 0, kept = 0, last = 0;
    bool *drop = calloc(n ? n : 1, sizeof(*drop));
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!drop) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        size_t by;
        if (in[i].census_only) {
            if (warn)
                fprintf(warn, "heapinject report: %s is a census: a census is reported on its own, not merged\n",
                        names && names[i] ? names[i] : "a profile");
            rc = -EINVAL;
            goto out;
        }
        if ((drop[i] = superseded(in, n, i, &by)) && warn)
            fprintf(warn, "heapinject report: %s is an earlier snapshot of the session of %s (pid %d): only the later one counts\n",
                    names && names[i] ? names[i] : "a profile", names && names[by] ? names[by] : "another",
                    (int)in[i].pid);
        if (!drop[i]) {
            nstacks += in[i].nstacks;
            nthreads += in[i].nthreads;
            kept++;
            last = i;
        }
    }
    if (!(out->strings = cli_intern_new()) ||
        !(out->stacks = calloc(nstacks ? nstacks : 1, sizeof(*out->stacks))) ||
        !(out->threads = calloc(nthreads ? nthreads : 1, sizeof(*out->threads)))) {
        rc = -ENOMEM;
        goto out;
    }
    bool first = true;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct cli_profile *p = &in[i];
        if (drop[i])
            continue;
        size_t np;
        struct cli_process one;
        const struct cli_process *procs = cli_profile_process_list(p, &np, &one);
        for (size_t k = 0; k < np && rc == 0; k++) {
            if (cli_profile_process_find(out, procs[k].pid)) {
                if (warn)
                    fprintf(warn, "heapinject report: pid %d is in more than one session (%s): the stacks of each count\n",
                            (int)procs[k].pid, names && names[i] ? names[i] : "a profile");
                continue;
            }
            rc = add_process(out, &procs[k], &cap);
            if (rc == 0 && procs == &one && !out->processes[out->nprocesses - 1].exe)
                out->processes[out->nprocesses - 1].exe = exe_of_maps(p->maps, p->maps_len);
        }
        for (size_t k = 0; k < p->nstacks && rc == 0; k++)
            rc = move_stack(&out->stacks[out->nstacks++], &p->stacks[k], p->pid, out->strings);
        if (p->nthreads)
            memcpy(out->threads + out->nthreads, p->threads, p->nthreads * sizeof(*p->threads));
        out->nthreads += p->nthreads;
        if (rc == 0)
            rc = add_debug_hints(out, p);
        add_u64s(&out->totals, &p->totals, sizeof(out->totals));
        add_u64s(&out->hist, &p->hist, sizeof(out->hist));
        if (p->have_mmap) {
            add_u64s(&out->mmap, &p->mmap, sizeof(out->mmap));
            out->have_mmap = true;
        }
        if (p->have_walks) {
            add_u64s(&out->walks, &p->walks, sizeof(out->walks));
            out->have_walks = true;
        }
        add_python(&out->python, &p->python);
        add_pymalloc(out, p);
        out->rss_bytes += p->rss_bytes;
        if (first) {
            out->rate = p->rate;
            out->tick_ms = p->tick_ms;
            out->attach_ns = p->attach_ns;
            out->snapshot_ns = p->snapshot_ns;
            out->duration_s = p->duration_s;
            if (p->maps && !(out->maps = malloc(p->maps_len + 1)))
                rc = -ENOMEM;
            if (out->maps) {
                memcpy(out->maps, p->maps, p->maps_len);
                out->maps[p->maps_len] = '\0';
                out->maps_len = p->maps_len;
            }
            first = false;
            continue;
        }
        if (p->tick_ms != out->tick_ms)
            out->tick_ms = 0; /* growth points of different spacing */
        if (p->duration_s > out->duration_s)
            out->duration_s = p->duration_s;
        if (!out->maps_differ &&
            (p->maps_len != out->maps_len || (p->maps_len && memcmp(p->maps, out->maps, p->maps_len)))) {
            out->maps_differ = true;
            free(out->maps);
            out->maps = NULL;
            out->maps_len = 0;
        }
        /* The span: from the first attach to the last snapshot, on the
         * host's monotonic clock that every agent reads. */
        if (out->attach_ns && p->attach_ns && out->snapshot_ns && p->snapshot_ns) {
            if (p->attach_ns < out->attach_ns)
                out->attach_ns = p->attach_ns;
            if (p->snapshot_ns > out->snapshot_ns)
                out->snapshot_ns = p->snapshot_ns;
            out->duration_s = (double)(out->snapshot_ns - out->attach_ns) / 1e9;
        } else {
            out->attach_ns = out->snapshot_ns = 0; /* unknown: the longest session's */
        }
    }
    if (rc < 0)
        goto out;
    if (out->nprocesses > 1)
        qsort(out->processes, out->nprocesses, sizeof(*out->processes), cmp_process);
    /* The profile's pid: the one process, else the first whose parent is
     * not in the list (the master), else the lowest. */
    for (size_t k = 0; k < out->nprocesses; k++) {
        if (!cli_profile_process_find(out, out->processes[k].ppid)) {
            out->pid = out->processes[k].pid;
            break;
        }
    }
    if (!out->pid && out->nprocesses)
        out->pid = out->processes[0].pid;
    /* Every session's timeline, each tick naming its process (a top
     * riser's bucket is its own agent's). */
    if ((rc = cli_ticks_merge(in, n, drop, out->attach_ns, &out->ticks, &out->nticks)) < 0)
        goto out;
    if (kept == 1) {
        /* One session: its own words stay. */
        struct cli_profile *p = &in[last];
        out->note = p->note;
        p->note = NULL;
        out->have_exit = p->have_exit;
        out->exit = p->exit;
    }
    cli_profile_sort(out);
out:
    for (size_t i = 0; i < n; i++)
        cli_profile_free(&in[i]);
    free(drop);
    if (rc < 0)
        cli_profile_free(out);
    return rc;
}
