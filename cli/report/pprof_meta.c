/* pprof_meta.c - session totals and ticks as pprof comments. */
#include "cli/report/pprof_meta.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define TOTALS_TAG "#heapinject v1"
#define TICKS_TAG "#heapinject-ticks v1"

static const struct {
    const char *name;
    size_t off;
} totals_fields[] = {
#define F(x) { #x, offsetof(struct hi_totals, x) }
    F(exact_alloc_bytes), F(exact_alloc_calls), F(exact_free_bytes), F(exact_free_calls),
    F(est_alloc_bytes), F(est_alloc_objects), F(est_free_bytes), F(est_free_objects),
    F(est_live_bytes), F(est_live_objects), F(raw_samples), F(dropped_samples),
    F(buckets), F(payload_mem_bytes),
#undef F
};
#define NFIELDS (sizeof(totals_fields) / sizeof(totals_fields[0]))

int cli_pprof_meta_format(const struct cli_profile *p, struct cli_buf *b,
                          enum cli_pprof_meta_kind kind)
{
    if (kind == CLI_PPROF_META_TICKS) {
        if (cli_buf_addf(b, "%s", TICKS_TAG))
            return -ENOMEM;
        for (size_t i = 0; i < p->nticks; i++) {
            const struct cli_tick *t = &p->ticks[i];
            if (cli_buf_addf(b, " %.3f:%" PRIu64 ":%" PRIu64 ":%" PRIu64, t->t_s, t->live_bytes,
                             t->alloc_bytes, t->rss_bytes))
                return -ENOMEM;
        }
        return 0;
    }
    if (cli_buf_addf(b, "%s pid=%d rate=%" PRIu64 " duration_s=%.6f attach_ns=%" PRIu64
                        " snapshot_ns=%" PRIu64 " rss_bytes=%" PRIu64,
                     TOTALS_TAG, p->pid, p->rate, p->duration_s, p->attach_ns, p->snapshot_ns,
                     p->rss_bytes))
        return -ENOMEM;
    for (size_t i = 0; i < NFIELDS; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&p->totals + totals_fields[i].off, sizeof(v));
        if (cli_buf_addf(b, " %s=%" PRIu64, totals_fields[i].name, v))
            return -ENOMEM;
    }
    if (p->have_walks && cli_buf_addf(b, " stack_walks=%" PRIu64 " stack_walks_truncated=%" PRIu64,
                                      p->walks.walks, p->walks.truncated))
        return -ENOMEM;
    return 0;
}

static bool starts(const char *s, const char *tag)
{
    size_t n = strlen(tag);
    return !strncmp(s, tag, n) && (s[n] == ' ' || s[n] == '\0');
}

static void parse_totals(const char *s, struct cli_profile *p)
{
    while (*s) {
        while (*s == ' ')
            s++;
        const char *eq = strchr(s, '='), *sp = strchr(s, ' ');
        if (!eq || (sp && sp < eq)) {
            s = sp ? sp : s + strlen(s);
            continue;
        }
        size_t klen = (size_t)(eq - s);
        const char *v = eq + 1;
        char *end;
#define KEY(k) (klen == strlen(k) && !memcmp(s, k, klen))
        if (KEY("pid")) {
            long x = strtol(v, &end, 10);
            if (x > 0 && x <= INT32_MAX)
                p->pid = (int32_t)x;
        } else if (KEY("duration_s")) {
            double d = strtod(v, &end);
            if (d >= 0 && d < 1e12)
                p->duration_s = d;
        } else if (KEY("rate")) {
            p->rate = strtoull(v, &end, 10);
        } else if (KEY("attach_ns")) {
            p->attach_ns = strtoull(v, &end, 10);
        } else if (KEY("snapshot_ns")) {
            p->snapshot_ns = strtoull(v, &end, 10);
        } else if (KEY("rss_bytes")) {
            p->rss_bytes = strtoull(v, &end, 10);
        } else if (KEY("stack_walks")) {
            p->walks.walks = strtoull(v, &end, 10);
            p->have_walks = true;
        } else if (KEY("stack_walks_truncated")) {
            uint64_t x = strtoull(v, &end, 10);
            p->walks.truncated = x;
        } else {
            for (size_t i = 0; i < NFIELDS; i++) {
                if (KEY(totals_fields[i].name)) {
                    uint64_t x = strtoull(v, &end, 10);
                    memcpy((char *)&p->totals + totals_fields[i].off, &x, sizeof(x));
                }
            }
        }
#undef KEY
        s = strchr(v, ' ');
        if (!s)
            break;
    }
}

static int parse_ticks(const char *s, struct cli_profile *p)
{
    size_t n = 0;
    for (const char *c = s; *c; c++)
        n += *c == ' ';
    if (!n || p->ticks)
        return 0;
    struct cli_tick *ticks = calloc(n, sizeof(*ticks));
    if (!ticks)
        return -ENOMEM;
    size_t cnt = 0;
    while (s && *s && cnt < n) {
        while (*s == ' ')
            s++;
        struct cli_tick t;
        char *end;
        t.t_s = strtod(s, &end);
        if (end == s || *end != ':' || !(t.t_s >= 0 && t.t_s < 1e12))
            break;
        s = end + 1;
        t.live_bytes = strtoull(s, &end, 10);
        if (end == s || *end != ':')
            break;
        s = end + 1;
        t.alloc_bytes = strtoull(s, &end, 10);
        if (end == s || *end != ':')
            break;
        s = end + 1;
        t.rss_bytes = strtoull(s, &end, 10);
        if (end == s || (*end && *end != ' '))
            break;
        s = end;
        ticks[cnt++] = t;
    }
    if (!cnt) {
        free(ticks);
        return 0;
    }
    p->ticks = ticks;
    p->nticks = cnt;
    return 0;
}

int cli_pprof_meta_parse(const char *comment, struct cli_profile *p)
{
    if (starts(comment, TICKS_TAG)) {
        int err = parse_ticks(comment + strlen(TICKS_TAG), p);
        return err ? err : 1;
    }
    if (starts(comment, TOTALS_TAG)) {
        parse_totals(comment + strlen(TOTALS_TAG), p);
        if (p->walks.truncated > p->walks.walks) /* a hand-edited or corrupt comment */
            p->walks.truncated = p->walks.walks;
        return 1;
    }
    return 0;
}
