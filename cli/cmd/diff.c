/* diff.c - `heapinject diff BASE FILE`: the difference of two saved
 * profiles (cli/profile/diff.c), each loaded as `heapinject report` loads
 * one (cli/cmd/report.c), written in any format. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd/commands.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "cli/cmd/report.h"
#include "cli/html/page.h"
#include "cli/profile/diff.h"
#include "cli/util/exitcode.h"

struct html_diff {
    const struct cli_profile *base, *cur;
    const struct cli_report_options *ro;
};

static int write_html_diff(FILE *f, void *arg)
{
    const struct html_diff *hd = arg;
    return cli_html_write_diff(hd->base, hd->cur, hd->ro, f);
}

int cli_cmd_diff(int argc, char **argv)
{
    struct cli_options o;
    struct cli_report_options ro;
    struct cli_output out;
    struct cli_profile base, cur, d;
    int code = cli_options_parse_or_usage(CLI_CMD_DIFF, argc, argv, &o);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    cli_output_report_options(&ro, &o);
    if (cli_output_check(&ro, o.output) < 0 || cli_output_open(&out, o.output, o.mode) < 0)
        return CLI_EXIT_USAGE;
    cli_output_close(&out); /* checked: diffs are quick; written whole below */
    if ((code = cli_cmd_report_load("heapinject diff", o.files[0], &base)) != CLI_EXIT_OK)
        return code;
    if ((code = cli_cmd_report_load("heapinject diff", o.files[1], &cur)) != CLI_EXIT_OK) {
        cli_profile_free(&base);
        return code;
    }
    if (!strcmp(ro.format ? ro.format : "text", "html")) { /* the page shows both sides: what shrank too */
        char note[256];
        snprintf(note, sizeof(note), "growth from %s to %s", o.files[0], o.files[1]);
        ro.note = note;
        struct html_diff hd = { &base, &cur, &ro };
        int rc = cli_output_open(&out, o.output, o.mode) < 0 ? -EIO : cli_output_commit(&out, write_html_diff, &hd);
        cli_output_close(&out);
        cli_profile_free(&base);
        cli_profile_free(&cur);
        return rc < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    }
    int rc = cli_profile_diff(&base, &cur, &d);
    cli_profile_free(&base);
    cli_profile_free(&cur);
    if (rc < 0) {
        fprintf(stderr, "heapinject diff: %s\n", strerror(-rc));
        return CLI_EXIT_FAILURE;
    }
    char note[256];
    snprintf(note, sizeof(note), "growth from %s to %s", o.files[0], o.files[1]);
    ro.note = note;
    rc = cli_output_write(&d, &ro, o.output, o.mode);
    cli_profile_free(&d);
    return rc < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
