/* python.c - a census's Python section (issue 29): a CPython process's
 * objects by type, as the agent counted them in its copy
 * (payload/census/py_*.c), kept (written by cli/report/census_python.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/census/census.h"

#define CLI_PY_MAX_TYPES 65536u

int cli_census_set_python(struct cli_census *c, const struct hi_census_python *py)
{
    if (c->have_py)
        return -EPROTO;
    c->have_py = 1;
    c->py = *py;
    return 0;
}

/* Two classes of one name (a module loaded twice, a class made again) are
 * one row: a person reads them as one. */
int cli_census_add_pytype(struct cli_census *c, const struct hi_census_pytype *t)
{
    if (!c->have_py)
        return -EPROTO;
    for (size_t i = 0; i < c->npytypes; i++)
        if (!strcmp(c->pytypes[i].name, t->name)) {
            c->pytypes[i].objects += t->objects;
            c->pytypes[i].bytes += t->bytes;
            return 0;
        }
    if (c->npytypes >= CLI_PY_MAX_TYPES)
        return -E2BIG;
    if (c->npytypes == c->cap_pytypes) {
        size_t nc = c->cap_pytypes ? c->cap_pytypes * 2 : 256;
        void *n = realloc(c->pytypes, nc * sizeof(*c->pytypes));
        if (!n)
            return -ENOMEM;
        c->pytypes = n;
        c->cap_pytypes = nc;
    }
    c->pytypes[c->npytypes++] = *t;
    return 0;
}
