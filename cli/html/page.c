/* page.c - the HTML page: the page's data (cli/html/model.c) embedded as
 * JSON, the viewer's script and style from cli/html/viewer.{js,css}
 * (turned into C strings by mk/html.mk: build/gen/cli/html/assets.h). */
#include "cli/html/page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/html/assets.h"
#include "cli/html/model.h"

/* The JSON into the page: '<' only occurs inside JSON strings, where
 * \u003c means the same character, so "</script>" or "<!--" in a function
 * name or a path cannot end the data block or change how it is parsed. */
static int write_escaped_json(const char *json, size_t len, FILE *out)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (json[i] != '<')
            continue;
        if (fwrite(json + start, 1, i - start, out) != i - start || fputs("\\u003c", out) < 0)
            return -EIO;
        start = i + 1;
    }
    return fwrite(json + start, 1, len - start, out) == len - start ? 0 : -EIO;
}

static int write_page(const struct cli_html_input *in, int pid, FILE *out)
{
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    if (!mem)
        return -ENOMEM;
    int rc = cli_html_model_write(in, mem);
    if (fclose(mem) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0) {
        fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<title>heapinject: pid %d</title>\n<style>\n", pid);
        fwrite(cli_html_viewer_css, 1, sizeof(cli_html_viewer_css) - 1, out);
        fputs("</style></head>\n<body>\n<noscript>This report needs JavaScript.</noscript>\n"
              "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"hi-data\">\n", out);
        rc = write_escaped_json(json, len, out);
        fputs("</script>\n<script>\n", out);
        fwrite(cli_html_viewer_js, 1, sizeof(cli_html_viewer_js) - 1, out);
        fputs("</script>\n</body></html>\n", out);
    }
    free(json);
    if (rc == 0 && ferror(out))
        rc = -EIO;
    return rc;
}

int cli_html_write(const struct cli_profile *p, const struct cli_report_options *opt, FILE *out)
{
    struct cli_html_input in = { .cur = p, .note = opt->note, .top = opt->top };
    return write_page(&in, p->pid, out);
}

int cli_html_write_diff(const struct cli_profile *base, const struct cli_profile *cur,
                        const struct cli_report_options *opt, FILE *out)
{
    struct cli_html_input in = { .cur = cur, .base = base, .note = opt->note, .top = opt->top };
    return write_page(&in, cur->pid, out);
}

int cli_html_write_census(const struct cli_census *c, unsigned top, FILE *out)
{
    struct cli_html_input in = { .census = c, .top = top };
    return write_page(&in, c->pid, out);
}
