/* leaks.h - the --leaks views of a profile: live blocks with their ages, and
 * stacks whose live bytes keep growing. Shared by the text and json reports. */
#ifndef HI_CLI_LEAKS_H
#define HI_CLI_LEAKS_H

#include <stddef.h>

#include "cli/profile/profile.h"

struct cli_leak {
    size_t stack;          /* index into p->stacks */
    double oldest_age_s;   /* age of the oldest live sampled block */
    double mean_age_s;     /* mean age of the live sampled blocks */
};

/* Stacks that still hold sampled live blocks, by estimated live bytes
 * (descending). *out is malloc'ed (free() it; NULL when *n == 0).
 * 0 or -ENOMEM. */
int cli_leaks_rank(const struct cli_profile *p, struct cli_leak **out, size_t *n);

struct cli_growth {
    size_t stack;          /* index into p->stacks */
    unsigned points;       /* growth points used (one per tick) */
    double first, last;    /* estimated live bytes at the first and last point */
    double per_s;          /* least-squares slope in bytes per second (per
                              point when the tick interval is unknown) */
};

/* Stacks whose live bytes rose steadily across their growth history: at
 * least 3 points, the last above the first, at least half of the steps up,
 * and what went down no more than a tenth of the rise. By slope
 * (descending). *out is malloc'ed. 0 or -ENOMEM. */
int cli_leaks_growing_rank(const struct cli_profile *p, struct cli_growth **out, size_t *n);

/* Both rankings, as every report that shows --leaks reads them. */
struct cli_leak_views {
    struct cli_leak *leaks;     /* cli_leaks_rank */
    size_t nleaks;
    struct cli_growth *growing; /* cli_leaks_growing_rank */
    size_t ngrowing;
};

/* Fills *v with both rankings. 0, or -ENOMEM with nothing left to free. */
int cli_leaks_views(const struct cli_profile *p, struct cli_leak_views *v);
void cli_leaks_views_free(struct cli_leak_views *v);

#endif /* HI_CLI_LEAKS_H */
