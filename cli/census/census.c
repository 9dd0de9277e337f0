/* census.c - the census records and their names. */
#include "cli/census/census.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/profile.h"
#include "cli/symbolize/symbolize.h"
#include "cli/target/proc.h"

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

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

/* Every address to name becomes a one-frame "stack" for the symbolizer
 * (+1: it looks up pc - 1, as for a return address). */
int cli_census_name(struct cli_census *c)
{
    c->group_type = calloc(c->ngroups + 1, sizeof(char *));
    c->root_name = calloc(c->nroots + 1, sizeof(char *));
    if (!c->group_type || !c->root_name)
        return -ENOMEM;
    struct cli_profile p;
    memset(&p, 0, sizeof(p));
    p.maps = cli_proc_maps_text(c->pid, &p.maps_len);
    size_t n = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        n += c->groups[i].first_word != 0;
    for (size_t i = 0; i < c->nroots; i++)
        n += c->roots[i].kind == HI_ROOT_GLOBAL;
    p.stacks = calloc(n + 1, sizeof(*p.stacks));
    if (!p.stacks) {
        cli_profile_free(&p);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].first_word) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->groups[i].first_word + 1;
                p.stacks[k].npcs = 1;
            }
            k++;
        }
    for (size_t i = 0; i < c->nroots; i++)
        if (c->roots[i].kind == HI_ROOT_GLOBAL) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->roots[i].addr + 1;
                p.stacks[k].npcs = 1;
            }
            k++;
        }
    p.nstacks = n;
    int rc = 0;
    if (p.maps && n) {
        struct cli_symbolizer *s = cli_symbolizer_new(c->pid, cli_proc_same_mntns(c->pid));
        rc = s ? cli_symbolizer_run(s, &p) : -ENOMEM;
        if (s)
            cli_symbolizer_free(s);
    }
    k = 0;
    for (size_t i = 0; i < c->ngroups && rc == 0; i++)
        if (c->groups[i].first_word) {
            const struct cli_stack *st = &p.stacks[k++];
            const char *t = st->nframes ? cli_census_vtable_type(st->frames[0].function) : NULL;
            if (t && !(c->group_type[i] = strdup(t)))
                rc = -ENOMEM;
        }
    for (size_t i = 0; i < c->nroots && rc == 0; i++) {
        const struct hi_census_root *r = &c->roots[i];
        char buf[512];
        if (r->kind == HI_ROOT_GLOBAL) {
            const struct cli_stack *st = &p.stacks[k++];
            const struct cli_frame *f = st->nframes ? &st->frames[0] : NULL;
            if (f && f->function)
                snprintf(buf, sizeof(buf), "%s (%s)", f->function, f->module ? base_name(f->module) : "?");
            else
                snprintf(buf, sizeof(buf), "global at 0x%llx%s%s", (unsigned long long)r->addr,
                         f && f->module ? " in " : "", f && f->module ? base_name(f->module) : "");
        } else if (r->kind == HI_ROOT_STACK) {
            snprintf(buf, sizeof(buf), "stack of thread %d (%s)", (int)r->tid, r->thread[0] ? r->thread : "?");
        } else {
            snprintf(buf, sizeof(buf), "anonymous mapping 0x%llx-0x%llx (stacks of running threads, "
                                       "static TLS, a runtime's own memory)",
                     (unsigned long long)r->addr, (unsigned long long)r->end);
        }
        if (!(c->root_name[i] = strdup(buf)))
            rc = -ENOMEM;
    }
    cli_profile_free(&p);
    return rc;
}

void cli_census_free(struct cli_census *c)
{
    for (size_t i = 0; c->group_type && i < c->ngroups; i++)
        free(c->group_type[i]);
    for (size_t i = 0; c->root_name && i < c->nroots; i++)
        free(c->root_name[i]);
    free(c->group_type);
    free(c->root_name);
    free(c->groups);
    free(c->roots);
    memset(c, 0, sizeof(*c));
}
