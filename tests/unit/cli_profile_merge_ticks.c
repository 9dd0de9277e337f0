/* Unit tests for cli/profile/merge_ticks.c: the ticks of several profiles
 * as one timeline (issue 30). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/merge_ticks.h"

/* A profile of pid with n ticks every 0.5 s from first_s, live bytes
 * live0 + 100 per tick, its top naming bucket 0; attached at attach_ns. */
static void fx(struct cli_profile *p, int32_t pid, uint64_t attach_ns, size_t n, double first_s, uint64_t live0)
{
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->attach_ns = attach_ns;
    p->ticks = calloc(n, sizeof(*p->ticks));
    cr_assert(p->ticks);
    p->nticks = n;
    for (size_t i = 0; i < n; i++) {
        struct cli_tick *t = &p->ticks[i];
        t->t_s = first_s + 0.5 * (double)i;
        t->live_bytes = live0 + 100 * i;
        t->rss_bytes = 10 * live0;
        t->ntop = 1;
        t->top_bucket[0] = 0;
        t->top_grew[0] = 100;
        t->top_live[0] = t->live_bytes;
    }
}

/* Two processes, the second attached 0.25 s after the first: their ticks
 * interleave on the first's clock, each keeps its pid (its top's bucket 0
 * is its own), and the totals are the sums of each one's newest tick. */
Test(cli_profile_merge_ticks, interleaved_and_summed)
{
    struct cli_profile in[2];
    fx(&in[0], 100, 1000000000ull, 3, 0.5, 1000);
    fx(&in[1], 200, 1250000000ull, 3, 0.5, 5000);
    struct cli_tick *m;
    size_t n;
    cr_assert_eq(cli_ticks_merge(in, 2, NULL, 1000000000ull, &m, &n), 0);
    cr_assert_eq(n, 6);
    double t[] = { 0.5, 0.75, 1.0, 1.25, 1.5, 1.75 };
    int32_t pid[] = { 100, 200, 100, 200, 100, 200 };
    /* newest of each so far: 1000 | 1000+5000 | 1100+5000 | 1100+5100 | 1200+5100 | 1200+5200 */
    uint64_t live[] = { 1000, 6000, 6100, 6200, 6300, 6400 };
    for (size_t i = 0; i < n; i++) {
        cr_expect_float_eq(m[i].t_s, t[i], 1e-9, "tick %zu at %g", i, m[i].t_s);
        cr_expect_eq(m[i].pid, pid[i], "tick %zu of pid %d", i, m[i].pid);
        cr_expect_eq(m[i].live_bytes, live[i], "tick %zu live %lu", i, (unsigned long)m[i].live_bytes);
        cr_expect_eq(m[i].ntop, 1);
        cr_expect_eq(m[i].top_live[0], in[pid[i] == 100 ? 0 : 1].ticks[i / 2].live_bytes, "tick %zu's own top", i);
    }
    free(m);
    free(in[0].ticks);
    free(in[1].ticks);
}

/* A process that exited counts no more after its last tick; a dropped
 * profile (superseded) gives none; a tick already tagged keeps its pid. */
Test(cli_profile_merge_ticks, exited_and_dropped)
{
    struct cli_profile in[3];
    struct cli_process gone = { .pid = 100, .have_exit = true };
    fx(&in[0], 100, 0, 2, 0.5, 1000);
    in[0].processes = &gone;
    in[0].nprocesses = 1;
    fx(&in[1], 200, 0, 4, 0.5, 5000);
    in[1].ticks[3].pid = 201; /* from a merged file: its own process */
    fx(&in[2], 300, 0, 4, 0.5, 9000);
    bool drop[3] = { false, false, true };
    struct cli_tick *m;
    size_t n;
    cr_assert_eq(cli_ticks_merge(in, 3, drop, 0, &m, &n), 0);
    cr_assert_eq(n, 6);
    /* 0.5: 1000, 1000+5000; 1.0: 1100+5000 (pid 100's last), then 5100
     * alone (pid 100 gone); 1.5: 5200; 2.0: 5300 */
    uint64_t live[] = { 1000, 6000, 6100, 5100, 5200, 5300 };
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(m[i].live_bytes, live[i], "tick %zu live %lu", i, (unsigned long)m[i].live_bytes);
    cr_expect_eq(m[5].pid, 201);
    free(m);
    in[0].processes = NULL;
    for (int i = 0; i < 3; i++)
        free(in[i].ticks);
}
