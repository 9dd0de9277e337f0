/* views.h - the census folded the three ways the report shows it. */
#ifndef HI_CLI_CENSUS_VIEWS_H
#define HI_CLI_CENSUS_VIEWS_H

#include "cli/census/census.h"

struct cli_census_row {
    const char *type;        /* NULL: no C++ type (by size, unreachable) */
    uint64_t size;           /* 0 in the by-type view */
    uint64_t blocks, bytes;
    uint64_t unreachable_blocks, unreachable_bytes;
    uint64_t since_attach_blocks, since_attach_bytes;
    const char *since_attach_stack; /* where most of since_attach_bytes came
                                       from ("f < caller < ..."), or NULL */
    uint64_t since_attach_stack_bytes;
    const uint8_t *preview;  /* one block's first bytes, or NULL */
    uint64_t preview_len;
};

enum cli_census_view {
    CLI_CENSUS_BY_TYPE,        /* types only, by bytes */
    CLI_CENSUS_BY_SIZE,        /* all blocks by usable size, by bytes */
    CLI_CENSUS_UNREACHABLE,    /* (type, size) groups of unreachable blocks, by bytes */
    CLI_CENSUS_BY_GROUP,       /* (type, size) groups of all blocks, by bytes */
};

/* A census read back from its JSON (`heapinject report`): the views as
 * they were written (their first rows, up to the writer's --top) and how
 * many rows each had in all; its groups are not in the file. */
struct cli_census_saved {
    struct cli_census_row *rows[3]; /* BY_TYPE, BY_SIZE, UNREACHABLE */
    size_t n[3], total[3];
    size_t roots_total;
};

void cli_census_saved_free(struct cli_census_saved *s);

/* Rows in all of a view (more than it returns for a census read back). */
size_t cli_census_view_total(const struct cli_census *c, enum cli_census_view v, size_t n);

/* Roots that keep blocks of their own (the rest reach only shared ones),
 * in all: the roots list's length, also for a census read back. */
size_t cli_census_roots_held(const struct cli_census *c);

/* Rows of a view, sorted; the caller frees *rows. 0 or -ENOMEM. */
int cli_census_view(const struct cli_census *c, enum cli_census_view v, struct cli_census_row **rows, size_t *n);

/* Hex and ASCII of a preview: "48 65 6c 6c 6f 00 ... |Hello.|" */
const char *cli_census_preview(const uint8_t *p, uint64_t len, char *buf, size_t buflen);

#endif /* HI_CLI_CENSUS_VIEWS_H */
