/* report.c - one entry point and one table for every output format.
 *
 * A writer added to the table (name, suffix, binary, write function) is
 * available to --format, to -o's suffixes and to --help at once. */
#include "cli/report/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/census/census.h"
#include "cli/html/page.h"
#include "cli/report/collapsed.h"
#include "cli/report/heap.h"
#include "cli/report/massif.h"
#include "cli/report/pprof.h"
#include "cli/report/series.h"
#include "cli/report/svg.h"

/* text, and the census after it when the profile carries one. */
static int write_text(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    int rc = cli_report_text(p, opt, out);
    if (rc == 0 && p->census) {
        fputs("\n", out);
        rc = cli_census_write_text(out, p->census, opt->top ? opt->top : 10) < 0 ? -EIO : 0;
    }
    return rc;
}

static const struct cli_report_format formats[] = {
    { "text", ".txt", false, write_text, NULL },
    { "json", ".json", false, cli_report_json, NULL },
    { "pprof", ".pb.gz", true, NULL, cli_report_pprof },
    { "heap", ".heap", false, NULL, cli_report_heap },
    { "collapsed", ".folded", false, NULL, cli_report_collapsed },
    { "svg", ".svg", false, NULL, cli_report_svg },
    { "massif", ".massif", false, NULL, cli_report_massif },
    { "series", ".csv", false, NULL, cli_report_series },
    { "html", ".html", false, cli_html_write, NULL },
};

const struct cli_report_format *cli_report_find(const char *name)
{
    if (!name)
        name = "text";
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(formats[i].name, name))
            return &formats[i];
    return NULL;
}

const char *cli_report_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", formats[i].name);
        if (w < 0 || (size_t)w >= len - used)
            return buf;
        used += (size_t)w;
    }
    return buf;
}

int cli_report_write(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    const char *name = opt && opt->format ? opt->format : "text";
    struct cli_report_options defaults;
    int rc;

    if (!opt) {
        memset(&defaults, 0, sizeof(defaults));
        opt = &defaults;
    }
    const struct cli_report_format *f = cli_report_find(name);
    if (!f)
        return -EINVAL;
    rc = f->write_report ? f->write_report(p, opt, out) : f->write_file(p, &opt->fmt, out);
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = -EIO;
    return rc;
}
