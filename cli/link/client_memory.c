/* client_memory.c - the allocator's figures (ALLOC_STATS) and trimming
 * (TRIM_REQ, TRIM_DONE). */
#include "cli/link/client.h"

#include "cli/link/client_wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_client_alloc_stats(struct cli_client *c, struct hi_alloc_stats *st)
{
    int rc = cli_client_send(c, HI_MSG_ALLOC_STATS_REQ, NULL, 0);
    if (rc < 0)
        return rc;
    if ((rc = cli_client_expect(c, HI_MSG_ALLOC_STATS, st, sizeof(*st))) < 0)
        return rc;
    cli_client_clean_string(st->why, sizeof(st->why));
    return 0;
}

int cli_client_trim(struct cli_client *c, struct hi_trim_done *t, struct hi_alloc_stats *after)
{
    /* malloc_trim walks every free chunk of every arena: give it time. */
    int saved = c->timeout_ms, rc;
    c->timeout_ms = saved < 60000 ? 60000 : saved;
    rc = cli_client_send(c, HI_MSG_TRIM_REQ, NULL, 0);
    if (rc == 0)
        rc = cli_client_expect(c, HI_MSG_TRIM_DONE, t, sizeof(*t));
    c->timeout_ms = saved;
    if (rc < 0)
        return rc;
    cli_client_clean_string(t->how, sizeof(t->how));
    cli_client_clean_string(t->why, sizeof(t->why));
    if ((rc = cli_client_expect(c, HI_MSG_ALLOC_STATS, after, sizeof(*after))) < 0)
        return rc;
    cli_client_clean_string(after->why, sizeof(after->why));
    return 0;
}
