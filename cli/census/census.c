/* census.c - the census records as the agent sends them. */
#include "cli/census/census.h"
#include "cli/census/views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define CLI_CENSUS_MAX_GROUPS (1u << 22)

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    while (nc < need)
        nc *= 2;
    void *n = realloc(*arr, nc * elem);
    if (!n)
        return -ENOMEM;
    *arr = n;
    *cap = nc;
    return 0;
}

int cli_census_add_group(struct cli_census *c, const struct hi_census_group *g)
{
    if (c->ngroups >= CLI_CENSUS_MAX_GROUPS)
        return -E2BIG;
    if (grow((void **)&c->groups, &c->cap_groups, c->ngroups + 1, sizeof(*g)) < 0)
        return -ENOMEM;
    c->groups[c->ngroups++] = *g;
    return 0;
}

int cli_census_add_root(struct cli_census *c, const struct hi_census_root *r)
{
    if (c->nroots >= CLI_CENSUS_MAX_GROUPS)
        return -E2BIG;
    if (grow((void **)&c->roots, &c->cap_roots, c->nroots + 1, sizeof(*r)) < 0)
        return -ENOMEM;
    c->roots[c->nroots] = *r;
    c->roots[c->nroots].thread[HI_THREAD_NAME_LEN - 1] = '\0';
    c->nroots++;
    return 0;
}

const char *cli_census_vtable_type(const char *demangled)
{
    static const char prefix[] = "vtable for ";
    if (!demangled || strncmp(demangled, prefix, sizeof(prefix) - 1))
        return NULL;
    return demangled + sizeof(prefix) - 1;
}

void cli_census_free(struct cli_census *c)
{
    for (size_t i = 0; c->group_type && i < c->ngroups; i++)
        free(c->group_type[i]);
    for (size_t i = 0; c->root_name && i < c->nroots; i++)
        free(c->root_name[i]);
    for (size_t i = 0; c->group_stack && i < c->ngroups; i++)
        free(c->group_stack[i]);
    for (size_t i = 0; c->root_via && i < c->nroots; i++)
        free(c->root_via[i]);
    free(c->root_via);
    free(c->group_type);
    free(c->root_name);
    free(c->group_stack);
    free(c->groups);
    free(c->roots);
    free(c->pytypes);
    cli_census_saved_free(c->saved);
    memset(c, 0, sizeof(*c));
}
