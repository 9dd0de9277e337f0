/* pprof_meta.h - heapinject's session facts carried in pprof comments.
 *
 * profile.proto has no place for a session's totals and ticks, so the pprof
 * writer stores them as comment strings starting with '#' (pprof hides those
 * from its report header; `pprof -comments` prints them):
 *
 *   #heapinject v1 pid=123 rate=524288 duration_s=2.5 rss_bytes=... est_live_bytes=...
 *   #heapinject-ticks v1 0.5:1024:2048:8192 1.0:...      (t_s:live:alloc:rss)
 *
 * and the pprof reader restores them. Unknown keys are ignored.
 */
#ifndef HI_CLI_REPORT_PPROF_META_H
#define HI_CLI_REPORT_PPROF_META_H

#include "cli/profile/profile.h"
#include "cli/report/formats.h"

enum cli_pprof_meta_kind {
    CLI_PPROF_META_TOTALS,
    CLI_PPROF_META_TICKS,
};

/* Appends the comment of the given kind for p to b. 0 or -ENOMEM. */
int cli_pprof_meta_format(const struct cli_profile *p, struct cli_buf *b,
                          enum cli_pprof_meta_kind kind);

/* If comment is one of ours, fills the matching fields of p (ticks: p->ticks
 * is allocated, replacing nothing: call at most once per profile) and
 * returns 1; returns 0 for any other comment; -ENOMEM. */
int cli_pprof_meta_parse(const char *comment, struct cli_profile *p);

#endif /* HI_CLI_REPORT_PPROF_META_H */
