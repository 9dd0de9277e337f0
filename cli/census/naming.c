/* naming.c - names for the census: the C++ type of a group (the vtable
 * its first word points to) and the symbol of a global root, through the
 * cli's symbolizer, as for the frames of a profile. */
#include "cli/census/census.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/profile.h"
#include "cli/report/formats.h"
#include "cli/symbolize/symbolize.h"
#include "cli/target/proc.h"

#define CENSUS_STACK_SHOWN 4 /* functions of a group's top stack in its name */

/* Every address to name becomes a one-frame "stack" for the symbolizer
 * (+1: it looks up pc - 1, as for a return address). */
int cli_census_name(struct cli_census *c)
{
    c->group_type = calloc(c->ngroups + 1, sizeof(char *));
    c->root_name = calloc(c->nroots + 1, sizeof(char *));
    c->group_stack = calloc(c->ngroups + 1, sizeof(char *));
    if (!c->group_type || !c->root_name || !c->group_stack)
        return -ENOMEM;
    struct cli_profile p;
    memset(&p, 0, sizeof(p));
    p.maps = cli_proc_maps_text(c->pid, &p.maps_len);
    size_t n = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        n += c->groups[i].first_word != 0;
    for (size_t i = 0; i < c->nroots; i++)
        n += c->roots[i].kind == HI_ROOT_GLOBAL;
    for (size_t i = 0; i < c->ngroups; i++)
        n += c->groups[i].top_stack_nframes != 0;
    for (size_t i = 0; i < c->nroots; i++)
        n += c->roots[i].kind == HI_ROOT_GLOBAL && c->roots[i].via_first_word;
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
    /* The groups' top stacks since attach: return addresses, as in a
     * profile. */
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct hi_census_group *g = &c->groups[i];
        uint32_t nf = g->top_stack_nframes < HI_CENSUS_STACK_FRAMES ? g->top_stack_nframes : HI_CENSUS_STACK_FRAMES;
        if (!nf)
            continue;
        p.stacks[k].pcs = malloc(nf * sizeof(uint64_t));
        if (p.stacks[k].pcs) {
            memcpy(p.stacks[k].pcs, g->top_stack, nf * sizeof(uint64_t));
            p.stacks[k].npcs = nf;
        }
        k++;
    }
    /* The C++ objects global roots hold their memory through */
    for (size_t i = 0; i < c->nroots; i++)
        if (c->roots[i].kind == HI_ROOT_GLOBAL && c->roots[i].via_first_word) {
            p.stacks[k].pcs = malloc(sizeof(uint64_t));
            if (p.stacks[k].pcs) {
                p.stacks[k].pcs[0] = c->roots[i].via_first_word + 1;
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
                snprintf(buf, sizeof(buf), "%s (%s)", f->function, f->module ? cli_format_basename(f->module) : "?");
            else
                snprintf(buf, sizeof(buf), "global at 0x%llx%s%s", (unsigned long long)r->addr,
                         f && f->module ? " in " : "", f && f->module ? cli_format_basename(f->module) : "");
        } else if (r->kind == HI_ROOT_STACK) {
            snprintf(buf, sizeof(buf), "stack of thread %d (%s)", (int)r->tid, r->thread[0] ? r->thread : "?");
        } else if (r->kind == HI_ROOT_TLS) {
            snprintf(buf, sizeof(buf), "thread-local storage of thread %d (%s)", (int)r->tid,
                     r->thread[0] ? r->thread : "?");
        } else if (r->kind == HI_ROOT_REGISTER) {
            snprintf(buf, sizeof(buf), "registers of thread %d (%s)", (int)r->tid, r->thread[0] ? r->thread : "?");
        } else {
            snprintf(buf, sizeof(buf), "anonymous mapping 0x%llx-0x%llx (stacks of running threads, "
                                       "static TLS, a runtime's own memory)",
                     (unsigned long long)r->addr, (unsigned long long)r->end);
        }
        if (!(c->root_name[i] = strdup(buf)))
            rc = -ENOMEM;
    }
    for (size_t i = 0; i < c->ngroups && rc == 0; i++) {
        if (!c->groups[i].top_stack_nframes)
            continue;
        const struct cli_stack *st = &p.stacks[k++];
        char buf[512];
        size_t o = 0;
        buf[0] = '\0';
        for (uint32_t f = 0; f < st->nframes && f < CENSUS_STACK_SHOWN && o < sizeof(buf); f++) {
            char nb[128];
            int w = snprintf(buf + o, sizeof(buf) - o, "%s%s", f ? " < " : "",
                             cli_format_frame_name(&st->frames[f], nb, sizeof(nb)));
            if (w < 0)
                break;
            o += (size_t)w;
        }
        if (buf[0] && !(c->group_stack[i] = strdup(buf)))
            rc = -ENOMEM;
    }
    for (size_t i = 0; i < c->nroots && rc == 0; i++) {
        const struct hi_census_root *r = &c->roots[i];
        if (r->kind != HI_ROOT_GLOBAL || !r->via_first_word)
            continue;
        const struct cli_stack *st = &p.stacks[k++];
        const char *t = st->nframes ? cli_census_vtable_type(st->frames[0].function) : NULL;
        if (!t || !c->root_name[i])
            continue;
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s -> %s object (%llu B)", c->root_name[i], t, (unsigned long long)r->via_size);
        free(c->root_name[i]);
        if (!(c->root_name[i] = strdup(buf)))
            rc = -ENOMEM;
        else if (!(c->root_via = c->root_via ? c->root_via : calloc(c->nroots + 1, sizeof(char *))) ||
                 !(c->root_via[i] = strdup(t)))
            rc = -ENOMEM;
    }
    cli_profile_free(&p);
    return rc;
}

