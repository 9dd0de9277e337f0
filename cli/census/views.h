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

/* Rows of a view, sorted; the caller frees *rows. 0 or -ENOMEM. */
int cli_census_view(const struct cli_census *c, enum cli_census_view v, struct cli_census_row **rows, size_t *n);

/* Hex and ASCII of a preview: "48 65 6c 6c 6f 00 ... |Hello.|" */
const char *cli_census_preview(const uint8_t *p, uint64_t len, char *buf, size_t buflen);

#endif /* HI_CLI_CENSUS_VIEWS_H */
