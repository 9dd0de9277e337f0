/* census.h - `heapinject census`: the heap as it is, from the agent's
 * census records (see payload/census.h), named and written out.
 *
 * The agent sends groups (usable size x first word), roots and a summary;
 * here the first words that point into a module become C++ types (the
 * symbol `vtable for T` they point into), global roots become their symbol
 * names, and the groups are folded into the views the report shows: by
 * type, by size, unreachable. */
#ifndef HI_CLI_CENSUS_H
#define HI_CLI_CENSUS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/census/cost.h"
#include "common/proto.h"

struct cli_census {
    pid_t pid;
    char comm[64];
    struct hi_census_end end;
    struct hi_census_group *groups;
    size_t ngroups, cap_groups;
    struct hi_census_root *roots;
    size_t nroots, cap_roots;
    char **group_type;   /* per group: demangled type, or NULL */
    char **root_name;    /* per root: what to call it */
    char **root_via;     /* per root (or NULL): the C++ type of the object a
                            global holds its memory through, or NULL */
    char **group_stack;  /* per group: "f < caller < ..." of the stack that
                            allocated most of it since attach, or NULL */
    double wall_ms;      /* the request, as the cli waited for it */
    double held_ms;      /* threads held by the cli for the fork (0: none) */
    size_t threads_held; /* whose registers were read */
    char regs_why[128];  /* none read: why */
    char layout_where[512]; /* libc's debug file, or why there is none */
    uint64_t main_arena;    /* where that debug information puts it (0: none) */
    uint64_t rss_before, rss_after;
    struct cli_census_saved *saved; /* read back from JSON: the views as
                                       written (cli/profile/read_census.c) */
    struct cli_census_cost cost; /* the faults the process took while the copy lived */
    /* A CPython process's objects by type (cli/census/python.c): have_py
     * 0 when the agent sent none (not Python, or an older payload). */
    int have_py;
    struct hi_census_python py;
    struct hi_census_pytype *pytypes;
    size_t npytypes, cap_pytypes;
    size_t py_types_total; /* read back from JSON: types before --top cut them */
};

/* Adds one record received from the agent; 0 or -ENOMEM / -E2BIG. */
int cli_census_add_group(struct cli_census *c, const struct hi_census_group *g);
int cli_census_add_root(struct cli_census *c, const struct hi_census_root *r);

/* Names types and roots from the target's modules. 0 or -errno. */
int cli_census_name(struct cli_census *c);

/* "Bar" from "vtable for Bar": the type a vtable symbol names, or NULL. */
const char *cli_census_vtable_type(const char *demangled);

int cli_census_write_text(FILE *out, const struct cli_census *c, unsigned top);
int cli_census_write_json(FILE *out, const struct cli_census *c, unsigned top);

/* The "census" object alone (inside a profile's JSON report). */
void cli_census_write_json_body(FILE *out, const struct cli_census *c, unsigned top);

/* Forgets what the groups say about blocks sampled since attach: when the
 * only attach was the census's own injection seconds earlier, "allocated
 * since attach" would describe the census, not the process's history. */
void cli_census_drop_since_attach(struct cli_census *c);

/* The Python section (cli/census/python.c): the summary, then its types
 * (names of one name merged). 0 or -ENOMEM / -E2BIG / -EPROTO. */
int cli_census_set_python(struct cli_census *c, const struct hi_census_python *py);
int cli_census_add_pytype(struct cli_census *c, const struct hi_census_pytype *t);
void cli_census_write_python_text(FILE *out, const struct cli_census *c, unsigned top);
/* ,\n  "python": {...} (nothing when the agent sent no Python section) */
void cli_census_write_python_json(FILE *out, const struct cli_census *c, unsigned top);

void cli_census_free(struct cli_census *c);

#endif /* HI_CLI_CENSUS_H */
