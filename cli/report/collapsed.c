/* collapsed.c - collapsed ("folded") stacks, the input of
 * flamegraph.pl, inferno, speedscope:
 *
 *   main;serve;leak_session_buffer 1048576
 *
 * One line per stack, frames root first joined by ';', a space and an
 * integer value (--value). Names are cleaned so that the line still splits
 * the way those tools split it (FORMATS.md): no ';' or newline inside a
 * name, no name ending in " <digits>".
 */
#include "cli/report/collapsed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report/collapsed_names.h"

int cli_report_collapsed(const struct cli_profile *p, const struct cli_format_options *opt,
                         FILE *out)
{
    struct cli_map *maps = NULL;
    size_t nmaps = 0;
    struct cli_buf line = { 0 };
    enum cli_value v;
    int err;

    if (cli_value_parse(opt ? opt->value : NULL, &v))
        return -EINVAL;
    if ((err = cli_maps_parse(p->maps, p->maps_len, &maps, &nmaps)))
        return err;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        double value = cli_value_of_stack(s, v);
        if (!(value >= 0.5))
            continue; /* rounds to 0: the tools drop or reject it anyway */
        line.len = 0;
        if ((err = cli_collapsed_stack_line(s, maps, nmaps, &line)))
            goto out;
        if (fprintf(out, "%s %.0f\n", line.data, floor(value + 0.5)) < 0) {
            err = -EIO;
            goto out;
        }
    }
    err = 0;
out:
    free(line.data);
    free(maps);
    return err;
}
