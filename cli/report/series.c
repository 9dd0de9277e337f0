/* series.c - the session's ticks as CSV, one row per tick:
 *
 *   t_s,live_bytes,alloc_bytes,rss_bytes
 *   0.500,1048576,2097152,8388608
 *
 * t_s is seconds since attach; live and alloc bytes are the unbiased
 * estimates since attach; rss_bytes is the target's resident set. A last row
 * comes from the snapshot itself when it is later than the last tick.
 * contrib/heapinject-series.gp plots it with gnuplot.
 */
#include "cli/report/series.h"

#include <errno.h>
#include <inttypes.h>

int cli_report_series(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out)
{
    (void)opt;
    if (fputs("t_s,live_bytes,alloc_bytes,rss_bytes\n", out) == EOF)
        return -EIO;
    double last = -1;
    for (size_t i = 0; i < p->nticks; i++) {
        const struct cli_tick *t = &p->ticks[i];
        if (fprintf(out, "%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", t->t_s, t->live_bytes,
                    t->alloc_bytes, t->rss_bytes) < 0)
            return -EIO;
        last = t->t_s;
    }
    /* Compare what is printed, so that the snapshot row never repeats a
     * tick's time stamp. */
    if (p->duration_s > 0 && p->duration_s < 9e15 && last < 9e15 &&
        (long long)(p->duration_s * 1000 + 0.5) > (long long)(last * 1000 + 0.5) &&
        fprintf(out, "%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", p->duration_s,
                p->totals.est_live_bytes, p->totals.est_alloc_bytes, p->rss_bytes) < 0)
        return -EIO;
    return 0;
}
