/* report.c - one entry point for every output format.
 *
 * text and json are written here in the cli (cli/report/text.c, cli/report/json.c);
 * the file formats are the formats helper's table cli_formats[] in
 * cli/report/formats.c: a writer added there (name, suffix, binary, write
 * function) is available to --format at once, nothing to register here. */
#include "cli/report/report.h"

#include "cli/census/census.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct cli_report_format builtin[] = {
    { "text", ".txt", false },
    { "json", ".json", false },
};

const struct cli_report_format *cli_report_find(const char *name, struct cli_report_format *buf)
{
    if (!name)
        name = "text";
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (!strcmp(builtin[i].name, name))
            return &builtin[i];
    const struct cli_format *f = cli_format_find(name);
    if (!f)
        return NULL;
    *buf = (struct cli_report_format){ f->name, f->suffix, f->binary };
    return buf;
}

const char *cli_report_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", builtin[i].name);
        if (w < 0 || (size_t)w >= len - used)
            return buf;
        used += (size_t)w;
    }
    for (const struct cli_format *f = cli_formats; f->name; f++) {
        int w = snprintf(buf + used, len - used, ", %s", f->name);
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
    if (!strcmp(name, "text")) {
        rc = cli_report_text(p, opt, out);
        if (rc == 0 && p->census) {
            fputs("\n", out);
            rc = cli_census_write_text(out, p->census, opt->top ? opt->top : 10) < 0 ? -EIO : 0;
        }
    }
    else if (!strcmp(name, "json"))
        rc = cli_report_json(p, opt, out);
    else {
        const struct cli_format *f = cli_format_find(name);
        if (!f)
            return -EINVAL;
        rc = f->write(p, &opt->fmt, out);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = -EIO;
    return rc;
}
