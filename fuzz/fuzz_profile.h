/* fuzz_profile.h - what the profile harnesses do with a profile that was
 * read without error: everything `heapinject report` and `heapinject diff`
 * do next (sort, diff, every writer), so that a file that reads "fine" but
 * holds odd values cannot crash them either. Included by fuzz_profile_*.c. */
#ifndef HI_FUZZ_PROFILE_H
#define HI_FUZZ_PROFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/profile.h"
#include "cli/profile/diff.h"
#include "cli/profile/read.h"
#include "cli/report/report.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s\n", #x); abort(); } } while (0)

static FILE *fuzz_sink(void)
{
    static FILE *f;
    if (!f && !(f = fopen("/dev/null", "w")))
        abort();
    return f;
}

/* The reader's contract: 0 with a profile, or -EBADMSG/-errno with an
 * empty profile and a reason. */
static void fuzz_after_read(int rc, struct cli_profile *p, const char *why)
{
    if (rc < 0) {
        CHECK(p->nstacks == 0 && p->stacks == NULL && p->nthreads == 0 && p->maps == NULL);
        CHECK(why[0]);
        return;
    }
    CHECK(rc == 0);
    CHECK(!p->maps_len || p->maps);
    for (size_t i = 0; i < p->nstacks; i++) {
        CHECK(!p->stacks[i].npcs || p->stacks[i].pcs);
        CHECK(!p->stacks[i].nframes || p->stacks[i].frames);
    }
    cli_profile_sort(p);
    struct cli_profile d;
    if (cli_profile_diff(p, p, &d) == 0)
        cli_profile_free(&d);
    static const char *const formats[] = { "text", "json", "pprof", "heap", "collapsed", "svg", "massif", "series" };
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        struct cli_report_options ro;
        memset(&ro, 0, sizeof(ro));
        ro.format = formats[i];
        cli_report_write(p, &ro, fuzz_sink());
        ro.leaks = true;
        if (i < 2)
            cli_report_write(p, &ro, fuzz_sink());
    }
    cli_profile_free(p);
}

/* One format's reader called alone: on error its partial profile is freed,
 * as cli_profile_read_mem does before passing the error on; otherwise the
 * profile goes through everything above. */
static inline void fuzz_after_reader(int rc, struct cli_profile *p, const char *why)
{
    if (rc < 0)
        cli_profile_free(p);
    else
        fuzz_after_read(rc, p, why);
}

#endif /* HI_FUZZ_PROFILE_H */
