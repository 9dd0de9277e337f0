/* live.c - the session's status line. */
#include "cli/cmd/live.h"

#include <stdio.h>
#include <unistd.h>

#include "cli/util/fmt.h"
#include "cli/process/proc.h"

/* Without a terminal (a log file, CI), one line per this many seconds. */
#define PLAIN_LINE_EVERY_S 10.0

void cli_live_init(struct cli_live *l, bool quiet, pid_t pid)
{
    *l = (struct cli_live){ .tty = isatty(STDERR_FILENO) == 1, .quiet = quiet, .pid = pid };
}

/* " (anonymous X, files Y[, shared Z])": what backs the RSS, from the
 * kernel's counters; the full split by holder (heap, mmap, stacks) reads
 * every mapping and is the report's. Empty when unreadable. */
static void rss_split(pid_t pid, char *out, size_t len)
{
    struct cli_proc_rss_split r;
    char a[32], f[32], sh[32];
    out[0] = '\0';
    if (pid <= 0 || cli_proc_rss_split(pid, &r) < 0 || !(r.anon || r.file))
        return;
    cli_fmt_bytes((double)r.anon, a, sizeof(a));
    cli_fmt_bytes((double)r.file, f, sizeof(f));
    if (r.shmem) {
        cli_fmt_bytes((double)r.shmem, sh, sizeof(sh));
        snprintf(out, len, " (anonymous %s, files %s, shared %s)", a, f, sh);
    } else {
        snprintf(out, len, " (anonymous %s, files %s)", a, f);
    }
}

void cli_live_tick(struct cli_live *l, const struct hi_tick *t, double elapsed_s, double duration_s)
{
    char el[32], dur[32], live[32], rate[32], rss[32], split[128];
    uint64_t alloc = t->totals.exact_alloc_bytes;

    if (l->prev_s > 0 && elapsed_s > l->prev_s && alloc >= l->prev_alloc)
        l->alloc_rate = (double)(alloc - l->prev_alloc) / (elapsed_s - l->prev_s);
    else if (l->prev_s == 0 && elapsed_s > 0)
        l->alloc_rate = (double)alloc / elapsed_s; /* first tick: since attach */
    l->prev_s = elapsed_s;
    l->prev_alloc = alloc;
    if (l->quiet)
        return;

    cli_fmt_duration(elapsed_s, el, sizeof(el));
    cli_fmt_bytes((double)t->totals.est_live_bytes, live, sizeof(live));
    cli_fmt_bytes(l->alloc_rate, rate, sizeof(rate));
    cli_fmt_bytes((double)t->rss_bytes, rss, sizeof(rss));
    bool draw = l->tty || elapsed_s - l->last_line_s >= PLAIN_LINE_EVERY_S;
    if (draw)
        rss_split(l->pid, split, sizeof(split));
    if (l->tty) {
        if (duration_s > 0)
            snprintf(dur, sizeof(dur), " of %.0f s", duration_s);
        else
            snprintf(dur, sizeof(dur), " (Ctrl-C stops)");
        fprintf(stderr, "\r\033[Kheapinject: %s%s  live heap since attach +%s  allocating %s/s  RSS %s%s", el,
                dur, live, rate, rss, split);
        fflush(stderr);
        l->drawn = true;
    } else if (elapsed_s - l->last_line_s >= PLAIN_LINE_EVERY_S) {
        fprintf(stderr, "heapinject: %s: live heap since attach +%s, allocating %s/s, RSS %s%s\n", el, live, rate,
                rss, split);
        l->last_line_s = elapsed_s;
    }
}

void cli_live_clear(struct cli_live *l)
{
    if (l->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        l->drawn = false;
    }
}
