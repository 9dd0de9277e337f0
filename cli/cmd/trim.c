/* trim.c - `heapinject trim -p PID`: the allocator gives free memory back.
 *
 * What on-call engineers do by hand with `gdb -p PID -ex 'call
 * malloc_trim(0)'`, done the way heapinject does everything else in a
 * target: the call runs on heapinject's agent thread (never on a thread the
 * program was using, so no lock of the program's is held by the thread
 * making the call and no syscall of the program's is interrupted half way),
 * through the function the allocator module itself exports. An agent that is
 * already attached is used and left attached; otherwise heapinject attaches
 * for the call (owning the session: if heapinject dies, the agent detaches
 * by itself) and detaches after.
 *
 * malloc_trim(0) locks each glibc arena in turn while it walks its free
 * chunks and madvise(MADV_DONTNEED)s their whole pages: threads that
 * allocate from that arena meanwhile wait, for milliseconds per GiB of free
 * memory (the time is printed).
 *
 * Several processes (-p PID,PID,..., --children, --cgroup, --unit; issue
 * 28) are trimmed one after the other, each as above. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/session/session.h"
#include "cli/link/attach.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/many.h"
#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"
#include "cli/memory/breakdown.h"
#include "cli/cmd/options.h"
#include "cli/process/proc.h"

static uint64_t rss_now(pid_t pid)
{
    struct cli_proc_mem m;
    return cli_proc_mem(pid, &m) == 0 ? m.rss : 0;
}

/* One process's trim: its lines on stdout, what went wrong on stderr.
 * *freed: RSS before minus after (bytes, may be negative). */
static int trim_one(const struct cli_options *opt, pid_t pid, double *freed)
{
    struct cli_options o = *opt;
    struct cli_session ss;
    struct cli_target *tg;
    struct hi_trim_done t;
    struct hi_alloc_stats after;
    char comm[64], a[32], b[32], e[32];
    int code;

    o.pid = pid;
    *freed = 0;
    /* As the one-shot session does: a short time-to-live covers the
     * moment before we own the session. */
    struct cli_attach_options ao = { .pid = o.pid, .rate = o.rate, .ttl_s = 2, .watch_cli = true, .via = o.via,
                                     .verbose = o.verbose };
    cli_session_init(&ss);
    tg = cli_session_add(&ss, o.pid);
    if ((code = cli_session_attach_for_request(tg, &ao)) != CLI_EXIT_OK)
        return code;
    cli_proc_comm(o.pid, comm, sizeof(comm));
    uint64_t before = rss_now(o.pid);
    int rc = cli_client_trim(&tg->link, &t, &after);
    uint64_t rss_after = rss_now(o.pid);
    if (tg->ours) {
        if (cli_client_detach(&tg->link) < 0 || cli_client_wait_closed(&tg->link, 5000) < 0)
            fprintf(stderr, "heapinject: pid %d: detach was not confirmed (%s); the agent detaches by itself now "
                            "that heapinject disconnects\n", (int)o.pid, tg->link.error);
    }
    cli_session_close(&ss);
    if (rc < 0) {
        fprintf(stderr, "heapinject: pid %d: trim failed: %s\n", (int)o.pid, tg->link.error);
        return cli_proc_alive(o.pid) ? CLI_EXIT_FAILURE : CLI_EXIT_NOPROC;
    }
    const char *name = cli_memory_allocator_name(t.allocator);
    if (t.status < 0) {
        printf("pid %d (%s): allocator %s: %s%s\n", (int)o.pid, comm, name, t.why,
               tg->ours ? "; heapinject detached again" : "");
        return t.status == -ENOTSUP ? CLI_EXIT_UNSUPPORTED : CLI_EXIT_FAILURE;
    }
    double diff = (double)before - (double)rss_after;
    *freed = diff;
    printf("pid %d (%s): %s %s took %.1f ms; RSS %s -> %s (%s%s)\n", (int)o.pid, comm, name, t.how,
           (double)t.took_ns / 1e6, cli_fmt_bytes((double)before, a, sizeof(a)),
           cli_fmt_bytes((double)rss_after, b, sizeof(b)), diff >= 0 ? "-" : "+",
           cli_fmt_bytes(diff >= 0 ? diff : -diff, e, sizeof(e)));
    if (after.status == 0 && (after.fields & HI_AF_IN_USE))
        printf("  %s now: in use %s, free %s (its count: mapped bytes; pages given back are no longer "
               "resident)\n", name, cli_fmt_bytes((double)after.in_use, a, sizeof(a)),
               cli_fmt_bytes((double)after.free, b, sizeof(b)));
    if (tg->ours)
        printf("  detached: hooks removed, the process runs on as before\n");
    return CLI_EXIT_OK;
}

/* -p PID,PID,..., --children, --cgroup, --unit: each process in turn (a
 * trim locks the allocator of one process; one after the other keeps the
 * lines in order). One that cannot be trimmed is said and the others go
 * on; the exit code is the first failure among the pids given with -p,
 * else of any. */
static int trim_many(const struct cli_options *o)
{
    struct cli_session *s = calloc(1, sizeof(*s));
    if (!s)
        return CLI_EXIT_FAILURE;
    cli_session_init(s);
    if (!cli_session_select(s, o->pids, o->npids, o->children, o->cgroup)) {
        fprintf(stderr, "heapinject: no process selected\n");
        free(s);
        return CLI_EXIT_NOPROC;
    }
    struct cli_many_failures failed = { CLI_EXIT_OK, CLI_EXIT_OK };
    size_t good = 0;
    double total = 0;
    for (size_t i = 0; i < s->ntargets; i++) {
        const struct cli_target *t = &s->targets[i];
        double freed;
        fflush(stdout);
        int code = trim_one(o, t->pid, &freed);
        if (code == CLI_EXIT_OK) {
            good++;
            total += freed;
            continue;
        }
        fprintf(stderr, "heapinject: pid %d (%s): not trimmed: %s\n", (int)t->pid, t->comm,
                cli_session_code_words(code));
        cli_many_note_failure(&failed, o, t->pid, code);
    }
    char a[32];
    printf("%zu of %zu processes trimmed; RSS %s%s in all\n", good, s->ntargets, total >= 0 ? "-" : "+",
           cli_fmt_bytes(total >= 0 ? total : -total, a, sizeof(a)));
    free(s);
    return failed.first_given != CLI_EXIT_OK ? failed.first_given : good ? CLI_EXIT_OK : failed.first;
}

int cli_cmd_trim(int argc, char **argv)
{
    struct cli_options o;
    double freed;
    int code;

    if ((code = cli_options_parse_or_usage(CLI_CMD_TRIM, argc, argv, &o)) != 0)
        return code < 0 ? CLI_EXIT_OK : code;
    if (cli_many_selected(&o))
        return trim_many(&o);
    return trim_one(&o, o.pid, &freed);
}
