/* processes.c - the processes of a profile in the reports (processes.h). */
#include "cli/report/processes.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "cli/profile/merge.h"
#include "cli/util/fmt.h"
#include "cli/report/formats.h"
#include "cli/report/report.h"
#include "cli/process/children.h"
#include "cli/process/paths.h"

void cli_process_sums(const struct cli_profile *p, int32_t pid, struct cli_process_sums *out)
{
    memset(out, 0, sizeof(*out));
    out->top_stack = -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        if (cli_stack_pid(p, s) != pid)
            continue;
        out->live_bytes += s->live_bytes;
        out->alloc_bytes += s->alloc_bytes;
        out->nstacks++;
        const struct cli_stack *t = out->top_stack >= 0 ? &p->stacks[out->top_stack] : NULL;
        if (!t || s->live_bytes > t->live_bytes || (s->live_bytes == t->live_bytes && s->alloc_bytes > t->alloc_bytes))
            out->top_stack = (long)i;
    }
}

bool cli_report_processes_header(const struct cli_profile *p, FILE *out)
{
    char a[32], b[32];
    if (p->nprocesses < 2)
        return false;
    fprintf(out, "heapinject: %zu processes (pids", p->nprocesses);
    for (size_t i = 0; i < p->nprocesses; i++)
        fprintf(out, "%s%d", i ? ", " : " ", (int)p->processes[i].pid);
    fprintf(out, "), %s from the first attach to the last snapshot, sampling 1 in every %s allocated on average\n\n",
            cli_fmt_duration(p->duration_s, a, sizeof(a)), cli_fmt_bytes((double)p->rate, b, sizeof(b)));
    return true;
}

/* The innermost named frame of s, else its first address, into buf. */
static const char *top_function(const struct cli_stack *s, char *buf, size_t len)
{
    for (uint32_t i = 0; i < s->nframes; i++) {
        const struct cli_frame *f = &s->frames[i];
        if (f->function && f->function[0])
            return cli_fmt_printable(f->function, buf, len);
    }
    if (s->npcs)
        snprintf(buf, len, "0x%" PRIx64, s->pcs[0]);
    else
        snprintf(buf, len, "(no frames)");
    return buf;
}

/* "  (exited during the session: exit code 0 at 14:02:11; its snapshot at
 * exit)": how and when a process ended, for the table. */
static void exit_words(const struct cli_target_exit *x, char *buf, size_t len)
{
    char how[48] = "", when[48] = "";
    if (x->status_known && x->signal)
        snprintf(how, sizeof(how), ": killed by signal %d", x->signal);
    else if (x->status_known)
        snprintf(how, sizeof(how), ": exit code %d", x->exit_code);
    if (x->at_unix_s > 0) {
        time_t t = (time_t)x->at_unix_s;
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof(when), " at %H:%M:%S", &tm);
    }
    snprintf(buf, len, "  (exited during the session%s%s%s)", how, when,
             x->at_exit ? "; its snapshot at exit" : "");
}

void cli_report_processes_table(const struct cli_profile *p, FILE *out)
{
    if (p->nprocesses < 2)
        return;
    fprintf(out, "Processes (live and allocated: estimated since each one's attach; top stack: its largest by live bytes):\n");
    fprintf(out, "%-8s %-8s %-16s %10s %10s %10s %7s  %s\n", "pid", "ppid", "comm", "RSS", "live", "allocated", "stacks",
            "top stack");
    for (size_t i = 0; i < p->nprocesses; i++) {
        const struct cli_process *o = &p->processes[i];
        struct cli_process_sums sm;
        char a[32], b[32], c[32], comm[64], top[256], ppid[16];
        cli_process_sums(p, o->pid, &sm);
        if (o->ppid)
            snprintf(ppid, sizeof(ppid), "%d", (int)o->ppid);
        else
            snprintf(ppid, sizeof(ppid), "?");
        if (sm.top_stack >= 0)
            top_function(&p->stacks[sm.top_stack], top, sizeof(top));
        else
            snprintf(top, sizeof(top), "-");
        char ended[160] = "";
        if (o->have_exit)
            exit_words(&o->exit, ended, sizeof(ended));
        fprintf(out, "%-8d %-8s %-16s %10s %10s %10s %7zu  %s%s\n", (int)o->pid, ppid,
                o->comm ? cli_fmt_printable(o->comm, comm, sizeof(comm))
                        : o->exe ? cli_fmt_printable(cli_paths_basename(o->exe), comm, sizeof(comm)) : "?",
                cli_fmt_bytes((double)o->rss_bytes, a, sizeof(a)), cli_fmt_bytes(sm.live_bytes, b, sizeof(b)),
                cli_fmt_bytes(sm.alloc_bytes, c, sizeof(c)), sm.nstacks, top, ended);
    }
    fputc('\n', out);
}

const char *cli_report_stack_process(const struct cli_profile *p, const struct cli_stack *s, char *buf, size_t len)
{
    buf[0] = '\0';
    if (p->nprocesses < 2)
        return buf;
    int32_t pid = cli_stack_pid(p, s);
    const struct cli_process *o = cli_profile_process_find(p, pid);
    char raw[128], safe[160];
    const char *name = o && o->comm ? o->comm : o && o->exe ? cli_paths_basename(o->exe) : NULL;
    if (name) {
        snprintf(raw, sizeof(raw), "%s", name);
        snprintf(buf, len, "pid %d (%s) ", (int)pid, cli_fmt_printable(raw, safe, sizeof(safe)));
    } else {
        snprintf(buf, len, "pid %d ", (int)pid);
    }
    return buf;
}

static void num(FILE *out, double v)
{
    fprintf(out, "%.0f", isfinite(v) && v > 0 ? v : 0);
}

void cli_report_processes_json(const struct cli_profile *p, FILE *out)
{
    size_t n;
    struct cli_process one;
    const struct cli_process *list = cli_profile_process_list(p, &n, &one);
    fputs("  \"processes\": [", out);
    for (size_t i = 0; i < n; i++) {
        const struct cli_process *o = &list[i];
        struct cli_process_sums sm;
        cli_process_sums(p, o->pid, &sm);
        fprintf(out, "%s\n    {\"pid\": %d, \"ppid\": ", i ? "," : "", (int)o->pid);
        if (o->ppid)
            fprintf(out, "%d", (int)o->ppid);
        else
            fputs("null", out);
        fputs(", \"comm\": ", out);
        cli_json_write_str(out, o->comm);
        fputs(", \"exe\": ", out);
        cli_json_write_str(out, o->exe);
        fprintf(out, ", \"started_during_session\": %s, \"attach_ms\": ", o->started_during_session ? "true" : "false");
        if (o->attach_ms >= 0)
            fprintf(out, "%.1f", o->attach_ms);
        else
            fputs("null", out);
        fprintf(out,
                ",\n     \"rss_bytes\": %" PRIu64 ", \"rate\": %" PRIu64 ", \"attach_ns\": %" PRIu64
                ", \"snapshot_ns\": %" PRIu64 ", \"duration_s\": %.3f,\n     \"live_bytes\": ",
                o->rss_bytes, o->rate, o->attach_ns, o->snapshot_ns, o->duration_s);
        num(out, sm.live_bytes);
        fputs(", \"alloc_bytes\": ", out);
        num(out, sm.alloc_bytes);
        fprintf(out,
                ", \"stacks\": %zu,\n     \"totals\": {\"exact_alloc_bytes\": %" PRIu64 ", \"exact_alloc_calls\": %" PRIu64
                ", \"exact_free_bytes\": %" PRIu64 ", \"exact_free_calls\": %" PRIu64 ", \"live_bytes\": %" PRIu64
                ", \"alloc_bytes\": %" PRIu64 "},\n     \"exit\": ",
                sm.nstacks, o->totals.exact_alloc_bytes, o->totals.exact_alloc_calls, o->totals.exact_free_bytes,
                o->totals.exact_free_calls, o->totals.est_live_bytes, o->totals.est_alloc_bytes);
        if (!o->have_exit)
            fputs("null", out);
        else {
            if (!o->exit.status_known)
                fputs("{\"signal\": null, \"exit_code\": null", out);
            else if (o->exit.signal)
                fprintf(out, "{\"signal\": %d, \"exit_code\": null", o->exit.signal);
            else
                fprintf(out, "{\"signal\": null, \"exit_code\": %d", o->exit.exit_code);
            if (o->exit.at_unix_s > 0)
                fprintf(out, ", \"at_unix_s\": %.3f", o->exit.at_unix_s);
            else
                fputs(", \"at_unix_s\": null", out);
            fprintf(out, ", \"snapshot_at_exit\": %s}", o->exit.at_exit ? "true" : "false");
        }
        fputc('}', out);
    }
    fputs(n ? "\n  ],\n" : "],\n", out);
}

const char *cli_report_children_command(int32_t pid, double duration_s, char *buf, size_t len)
{
    /* The duration of this session (at least a few seconds: a child that
     * serves requests needs time to allocate). */
    double d = duration_s >= 5 ? duration_s : 10;
    snprintf(buf, len, "heapinject -p %d --children --duration %.0f", (int)pid, ceil(d));
    return buf;
}

void cli_report_children_notice(int32_t pid, const struct cli_children *c, double duration_s, FILE *out)
{
    char a[32], cmd[512];
    if (!c || !c->count)
        return;
    fprintf(out, "heapinject: pid %d has %zu child %s (%s of RSS together%s), whose allocations are not in this "
                 "profile:",
            (int)pid, c->count, c->count == 1 ? "process" : "processes", cli_fmt_bytes((double)c->total_rss, a, sizeof(a)),
            c->forked_during_session ? "; some started during the session" : "");
    for (size_t i = 0; i < c->nlisted; i++)
        fprintf(out, "%s pid %d (%s, %s%s)", i ? "," : "", (int)c->listed[i].pid, c->listed[i].comm,
                cli_fmt_bytes((double)c->listed[i].rss, a, sizeof(a)),
                c->listed[i].forked_during_session ? ", new" : "");
    if (c->count > c->nlisted)
        fprintf(out, " and %zu more", c->count - c->nlisted);
    fprintf(out, "\nheapinject: to profile pid %d and all its children in one report:\n  %s\n", (int)pid,
            cli_report_children_command(pid, duration_s, cmd, sizeof(cmd)));
}

void cli_report_children_json(int32_t pid, const struct cli_children *c, double duration_s, FILE *out)
{
    char cmd[512];
    fputs("  \"children\": ", out);
    if (!c) {
        fputs("null,\n", out);
        return;
    }
    fprintf(out, "{\"count\": %zu, \"forked_during_session\": %zu, \"rss_bytes\": %" PRIu64 ", \"largest\": [",
            c->count, c->forked_during_session, c->total_rss);
    for (size_t i = 0; i < c->nlisted; i++) {
        fprintf(out, "%s{\"pid\": %d, \"rss_bytes\": %" PRIu64 ", \"forked_during_session\": %s, \"comm\": ",
                i ? ", " : "", (int)c->listed[i].pid, c->listed[i].rss,
                c->listed[i].forked_during_session ? "true" : "false");
        cli_json_write_str(out, c->listed[i].comm);
        fputc('}', out);
    }
    fputs("],\n    \"command\": ", out);
    cli_json_write_str(out, c->count ? cli_report_children_command(pid, duration_s, cmd, sizeof(cmd)) : NULL);
    fputs("},\n", out);
}
