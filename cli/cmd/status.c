/* status.c - `heapinject status -p PID`: is a profiler attached, with
 * what settings, what it has seen, what the process's memory is, and which
 * threads allocate how fast (from two snapshots --interval apart). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/session/session.h"
#include "cli/link/attach.h"
#include "cli/cmd/commands.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/link/memory_collect.h"
#include "cli/util/fmt.h"
#include "cli/process/proc.h"
#include "cli/process/slots.h"
#include "cli/process/seccomp_gate.h"

#define THREADS_SHOWN 20

/* status --format json: one object, the "memory" object as in the JSON
 * report (docs/JSON.md). */
static void print_json(pid_t pid, const char *comm, bool attached, const struct hi_hello *h, const struct cli_profile *p,
                       const struct cli_memory *m)
{
    struct cli_proc_mem pm;
    printf("{\n  \"schema\": \"heapinject-status\", \"version\": 1,\n  \"pid\": %d, \"comm\": \"", (int)pid);
    for (const char *s = comm; *s; s++)
        if ((unsigned char)*s >= 0x20 && *s != '"' && *s != '\\')
            putchar(*s);
    printf("\", \"attached\": %s,\n", attached ? "true" : "false");
    if (attached && h && p)
        printf("  \"rate\": %" PRIu64 ", \"since_attach_s\": %.3f, \"slots_patched\": %u,\n"
               "  \"totals\": {\"exact_alloc_bytes\": %" PRIu64 ", \"exact_alloc_calls\": %" PRIu64
               ", \"exact_free_bytes\": %" PRIu64 ", \"exact_free_calls\": %" PRIu64 ", \"live_bytes\": %" PRIu64
               ", \"samples\": %" PRIu64 "},\n",
               h->rate, p->duration_s, h->slots_patched, p->totals.exact_alloc_bytes, p->totals.exact_alloc_calls,
               p->totals.exact_free_bytes, p->totals.exact_free_calls, p->totals.est_live_bytes, p->totals.raw_samples);
    if (cli_proc_mem(pid, &pm) == 0 && pm.have_pss)
        printf("  \"smaps_rollup\": {\"rss_bytes\": %" PRIu64 ", \"pss_bytes\": %" PRIu64 ", \"uss_bytes\": %" PRIu64
               ", \"swap_bytes\": %" PRIu64 "},\n", pm.rss, pm.pss, pm.uss, pm.swap);
    printf("  \"memory\": ");
    cli_memory_write_json(m, "  ", stdout);
    printf("\n}\n");
}

static void print_memory(pid_t pid)
{
    struct cli_proc_mem m;
    char a[32], b[32], c[32], d[32];
    if (cli_proc_mem(pid, &m) < 0)
        return;
    if (m.have_pss)
        printf("  memory:   RSS %s, PSS %s, USS %s (private), swap %s\n", cli_fmt_bytes((double)m.rss, a, sizeof(a)),
               cli_fmt_bytes((double)m.pss, b, sizeof(b)), cli_fmt_bytes((double)m.uss, c, sizeof(c)),
               cli_fmt_bytes((double)m.swap, d, sizeof(d)));
    else
        printf("  memory:   RSS %s (smaps_rollup not readable)\n", cli_fmt_bytes((double)m.rss, a, sizeof(a)));
}

struct thread_rate {
    const struct cli_thread *t;
    double alloc_per_s, calls_per_s, free_per_s;
};

static int cmp_rate(const void *a, const void *b)
{
    const struct thread_rate *x = a, *y = b;
    if (x->alloc_per_s != y->alloc_per_s)
        return x->alloc_per_s > y->alloc_per_s ? -1 : 1;
    if (x->t->alloc_bytes != y->t->alloc_bytes)
        return x->t->alloc_bytes > y->t->alloc_bytes ? -1 : 1;
    return x->t->tid - y->t->tid;
}

/* Rates per thread between two snapshots (or since attach when there is
 * only one); a thread is matched by tid. */
static void print_threads(pid_t pid, const struct cli_profile *a, const struct cli_profile *b)
{
    const struct cli_profile *now = b ? b : a;
    double dt = b ? (double)(b->snapshot_ns - a->snapshot_ns) / 1e9 : now->duration_s;
    if (!now->nthreads)
        return;
    struct thread_rate *r = calloc(now->nthreads, sizeof(*r));
    if (!r)
        return;
    for (size_t i = 0; i < now->nthreads; i++) {
        const struct cli_thread *t = &now->threads[i];
        uint64_t ab = t->alloc_bytes, ac = t->alloc_calls, fb = t->free_bytes;
        if (b) {
            for (size_t j = 0; j < a->nthreads; j++) {
                if (a->threads[j].tid == t->tid) {
                    ab -= ab >= a->threads[j].alloc_bytes ? a->threads[j].alloc_bytes : ab;
                    ac -= ac >= a->threads[j].alloc_calls ? a->threads[j].alloc_calls : ac;
                    fb -= fb >= a->threads[j].free_bytes ? a->threads[j].free_bytes : fb;
                    break;
                }
            }
        }
        r[i] = (struct thread_rate){ t, dt > 0 ? ab / dt : 0, dt > 0 ? ac / dt : 0, dt > 0 ? fb / dt : 0 };
    }
    qsort(r, now->nthreads, sizeof(*r), cmp_rate);
    char d[32];
    printf("  threads:  allocation rates %s %s\n", b ? "over the last" : "since attach,",
           cli_fmt_duration(dt, d, sizeof(d)));
    printf("    %8s  %-16s %12s %10s %12s %12s\n", "TID", "NAME", "ALLOC/s", "CALLS/s", "FREE/s", "ALLOC TOTAL");
    size_t n = now->nthreads < THREADS_SHOWN ? now->nthreads : THREADS_SHOWN;
    for (size_t i = 0; i < n; i++) {
        char x[32], y[32], z[32], w[32], name[4 * HI_THREAD_NAME_LEN + 16];
        const struct cli_thread *t = r[i].t;
        if (!t->alive && !t->alloc_calls && !t->free_calls)
            continue; /* the empty "(exited)" slot */
        cli_fmt_printable(t->name, name, sizeof(name)); /* raw from the agent */
        if (!name[0] && t->alive)
            cli_proc_thread_name(pid, t->tid, name, sizeof(name));
        printf("    %8d  %-16s %10s/s %10s %10s/s %12s%s\n", (int)t->tid, name[0] ? name : "?",
               cli_fmt_bytes(r[i].alloc_per_s, x, sizeof(x)), cli_fmt_count(r[i].calls_per_s, y, sizeof(y)),
               cli_fmt_bytes(r[i].free_per_s, z, sizeof(z)), cli_fmt_bytes((double)t->alloc_bytes, w, sizeof(w)),
               t->alive ? "" : "  (exited)");
    }
    if (now->nthreads > n)
        printf("    (%zu more %s)\n", now->nthreads - n, cli_fmt_noun((double)(now->nthreads - n), "thread", "threads"));
    free(r);
}

/* The status of one process, o->pid. */
static int status_one(const struct cli_options *o, bool json)
{
    struct cli_session ss;
    struct cli_target *tg;
    struct cli_profile a, b;
    char comm[64], x[32], y[32], z[32], w[32];
    int code;

    cli_session_init(&ss);
    tg = cli_session_add(&ss, o->pid);
    code = cli_session_connect(tg, true);
    if (code == CLI_EXIT_NOPROC) {
        fprintf(stderr, "heapinject: pid %d: no such process.\n", (int)o->pid);
        return code;
    }
    if (code == CLI_EXIT_USAGE) /* a thread id: say so, not another process's memory */
        return cli_attach_check_is_process(o->pid, false);
    cli_proc_comm(o->pid, comm, sizeof(comm));
    if (code != CLI_EXIT_OK && cli_proc_kernel_thread(o->pid)) {
        fprintf(stderr, "heapinject: pid %d (%s) is a kernel thread: it has no memory of its own to split or profile\n",
                (int)o->pid, comm);
        return CLI_EXIT_NOPROC;
    }
    if (code != CLI_EXIT_OK) {
        /* Not attached: smaps alone still splits most of the RSS. */
        struct cli_memory *m = cli_memory_collect(o->pid, NULL, NULL);
        if (json) {
            print_json(o->pid, comm, false, NULL, NULL, m);
        } else {
            printf("pid %d (%s): ", (int)o->pid, comm);
            printf(code == CLI_EXIT_NOTATTACHED ? "not attached\n" : "unknown (see the message below)\n");
            print_memory(o->pid);
            cli_memory_write_text(m, "  ", stdout);
        }
        cli_memory_destroy(m);
        fflush(stdout);
        if (cli_gate_last()->sealed) /* the verdict may have let a due time-to-live run */
            return cli_gate_say(o->pid);
        if (code != CLI_EXIT_NOTATTACHED)
            cli_session_connect(tg, false); /* says why */
        return code;
    }
    /* A copy: closing the client below clears it. */
    const struct hi_hello hello = tg->link.hello, *h = &hello;
    if (cli_client_snapshot(&tg->link, &a) < 0) {
        fprintf(stderr, "heapinject: pid %d: snapshot failed: %s\n", (int)o->pid, tg->link.error);
        cli_session_close(&ss);
        return CLI_EXIT_FAILURE;
    }
    struct timespec ts = { (time_t)o->interval_s, (long)((o->interval_s - (double)(time_t)o->interval_s) * 1e9) };
    nanosleep(&ts, NULL);
    bool have_b = cli_client_snapshot(&tg->link, &b) == 0;
    const struct cli_profile *p = have_b ? &b : &a;
    struct cli_memory *m = cli_memory_collect(o->pid, &tg->link, p);
    cli_session_close(&ss);
    if (json) {
        print_json(o->pid, comm, true, h, p, m);
        cli_memory_destroy(m);
        cli_profile_free(&a);
        if (have_b)
            cli_profile_free(&b);
        return cli_gate_exit(o->pid, CLI_EXIT_OK);
    }
    double since = h->now_ns > h->attach_ns ? (double)(h->now_ns - h->attach_ns) / 1e9 : 0;
    printf("pid %d (%s): attached for %s, sampling 1 in %s\n", (int)o->pid, comm, cli_fmt_duration(since, x, sizeof(x)),
           cli_fmt_bytes((double)h->rate, y, sizeof(y)));
    printf("  socket:   %s\n", tg->sock.target);
    /* Read back as detach reads them, so that both count the same slots
     * and modules (the payload's own count leaves out the modules it
     * has no hook in). */
    struct cli_slots_report sr;
    if (cli_slots_check(o->pid, &sr) == 0 && sr.slots)
        printf("  hooks:    %u of the %u allocator slots of %u modules point into the profiler\n", sr.hooked, sr.slots,
               sr.with_slots);
    else
        printf("  hooks:    %u allocator slots hooked in %u modules\n", h->slots_patched, h->modules_patched);
    if (h->owned)
        printf("  session:  owned by a running 'heapinject -p %d' (detaches when it ends)\n", (int)o->pid);
    else if (h->ttl_ns) {
        double left = (double)(h->attach_ns + h->ttl_ns) / 1e9 - (double)h->now_ns / 1e9;
        printf("  session:  detached by 'heapinject detach -p %d', or by itself in %s (time-to-live)\n", (int)o->pid,
               cli_fmt_duration(left > 0 ? left : 0, x, sizeof(x)));
    } else
        printf("  session:  stays attached until 'heapinject detach -p %d'\n", (int)o->pid);
    const struct hi_totals *t = &p->totals;
    printf("  since attach: allocated %s in %s %s, freed %s in %s %s (exact)\n",
           cli_fmt_bytes((double)t->exact_alloc_bytes, x, sizeof(x)), cli_fmt_count((double)t->exact_alloc_calls, y, sizeof(y)),
           cli_fmt_noun((double)t->exact_alloc_calls, "call", "calls"),
           cli_fmt_bytes((double)t->exact_free_bytes, z, sizeof(z)), cli_fmt_count((double)t->exact_free_calls, w, sizeof(w)),
           cli_fmt_noun((double)t->exact_free_calls, "call", "calls"));
    printf("  live heap since attach: %s in %s %s (estimated)\n", cli_fmt_bytes((double)t->est_live_bytes, x, sizeof(x)),
           cli_fmt_count((double)t->est_live_objects, y, sizeof(y)),
           cli_fmt_noun((double)t->est_live_objects, "object", "objects"));
    if (have_b && b.snapshot_ns > a.snapshot_ns) {
        double dt = (double)(b.snapshot_ns - a.snapshot_ns) / 1e9;
        double rate = (double)(b.totals.exact_alloc_bytes - a.totals.exact_alloc_bytes) / dt;
        printf("  allocating: %s/s now\n", cli_fmt_bytes(rate > 0 ? rate : 0, x, sizeof(x)));
    }
    printf("  profiler: %" PRIu64 " samples (%" PRIu64 " dropped), %" PRIu64 " stacks, %s of memory\n", t->raw_samples,
           t->dropped_samples, t->buckets, cli_fmt_bytes((double)t->payload_mem_bytes, x, sizeof(x)));
    print_memory(o->pid);
    cli_memory_write_text(m, "  ", stdout);
    cli_memory_destroy(m);
    print_threads(o->pid, &a, have_b ? &b : NULL);
    cli_profile_free(&a);
    if (have_b)
        cli_profile_free(&b);
    return cli_gate_exit(o->pid, CLI_EXIT_OK);
}

int cli_cmd_status(int argc, char **argv)
{
    struct cli_options o;
    int code;

    if ((code = cli_options_parse_or_usage(CLI_CMD_STATUS, argc, argv, &o)) != 0)
        return code < 0 ? CLI_EXIT_OK : code;
    bool json = !strcmp(o.format, "json");
    if (!json && strcmp(o.format, "text")) {
        fprintf(stderr, "heapinject status: --format: '%s' is not for status (text or json)\n", o.format);
        return CLI_EXIT_USAGE;
    }
    if (o.npids < 2 && !o.children && !o.cgroup)
        return status_one(&o, json);
    /* Several processes (issue 28): each in turn, in the order selected;
     * json: an array of the objects. The first failure is the exit code. */
    struct cli_session *sel = calloc(1, sizeof(*sel));
    if (!sel)
        return CLI_EXIT_FAILURE;
    cli_session_init(sel);
    if (!cli_session_select(sel, o.pids, o.npids, o.children, o.cgroup)) {
        fprintf(stderr, "heapinject: no process selected\n");
        free(sel);
        return CLI_EXIT_NOPROC;
    }
    int first = CLI_EXIT_OK;
    if (json)
        printf("[\n");
    for (size_t i = 0; i < sel->ntargets; i++) {
        if (json && i)
            printf(",\n");
        else if (i)
            printf("\n");
        fflush(stdout);
        o.pid = sel->targets[i].pid;
        code = status_one(&o, json);
        if (code != CLI_EXIT_OK && first == CLI_EXIT_OK)
            first = code;
    }
    if (json)
        printf("]\n");
    free(sel);
    return first;
}
