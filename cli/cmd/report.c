/* report.c - `heapinject report FILE`: a saved profile (read by
 * cli/profile/read.c) written again in any format. A profile saved without
 * function names (heap text, pprof --no-symbols) is symbolized here from
 * the files its maps name, as they are on this machine now (the loading
 * that `heapinject diff`, cmd/diff.c, shares). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/census/census.h"
#include "cli/cmd/commands.h"
#include "cli/cmd/report_many.h"
#include "cli/util/exitcode.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "cli/cmd/report.h"
#include "cli/html/page.h"
#include "cli/profile/read.h"
#include "cli/symbolize/symbolize.h"

int cli_cmd_report_load(const char *cmd, const char *path, struct cli_profile *p)
{
    char why[CLI_PROFILE_READ_WHY_LEN];
    int rc = cli_profile_read(path, p, NULL, why, sizeof(why));
    if (rc < 0)
        return cli_profile_read_perror(cmd, path, rc, why);
    bool named = false;
    for (size_t i = 0; i < p->nstacks && !named; i++)
        named = p->stacks[i].nframes > 0;
    if (!named && p->nstacks && p->maps_len) {
        /* No live process: files by their path, checked against the inode
         * the maps recorded when that is possible. */
        struct cli_symbolizer *s = cli_symbolizer_new(0, 1);
        if (!s || cli_symbolizer_run(s, p) < 0)
            fprintf(stderr, "%s: %s: symbolization failed: %s\n", cmd, path, strerror(ENOMEM));
        cli_symbolizer_free(s);
    }
    cli_profile_sort(p);
    return CLI_EXIT_OK;
}

struct census_doc {
    const struct cli_census *c;
    unsigned top;
    bool json, html;
};

static int write_census(FILE *f, void *arg)
{
    const struct census_doc *d = arg;
    if (d->html)
        return cli_html_write_census(d->c, d->top, f);
    int rc = d->json ? cli_census_write_json(f, d->c, d->top) : cli_census_write_text(f, d->c, d->top);
    return rc < 0 ? -EIO : 0;
}

/* A census file (`heapinject census --format json`): rendered again as
 * text, json or html, with the census command's default --top. */
static int report_census(const struct cli_profile *p, const struct cli_options *o, struct cli_output *out)
{
    bool json = !strcmp(o->format, "json"), html = !strcmp(o->format, "html");
    if (!json && !html && strcmp(o->format, "text")) {
        fprintf(stderr, "heapinject report: %s is a census: it is written as text, json or html, not %s\n",
                o->files[0], o->format);
        return CLI_EXIT_USAGE;
    }
    struct census_doc d = { p->census, o->top ? o->top : json || html ? 100 : 10, json, html };
    return cli_output_commit(out, write_census, &d) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

int cli_cmd_report(int argc, char **argv)
{
    struct cli_options o;
    struct cli_report_options ro;
    struct cli_output out;
    struct cli_profile p;
    int code = cli_options_parse_or_usage(CLI_CMD_REPORT, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    cli_output_report_options(&ro, &o);
    if (cli_output_check(&ro, o.output) < 0 || cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    if ((code = cli_report_load_many("heapinject report", o.files, o.nfiles, cli_cmd_report_load, &p)) != CLI_EXIT_OK) {
        cli_output_close(&out);
        return code;
    }
    if (p.census_only) {
        code = report_census(&p, &o, &out);
        cli_output_close(&out);
        cli_profile_free(&p);
        return code;
    }
    /* What the live report said of its process's end, said again. */
    ro.note = p.note;
    ro.target_exit = p.have_exit ? &p.exit : NULL;
    int rc = cli_output_commit_report(&out, &p, &ro);
    cli_output_close(&out);
    cli_profile_free(&p);
    return rc < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
