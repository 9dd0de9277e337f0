/* profile.c - lifetime and ordering of struct cli_profile.
 *
 * Ownership convention (shared with every producer of a profile: the
 * client, the symbolizer and the profile readers): every pointer in the
 * profile is its own malloc() allocation, including each string of each
 * frame (but in stacks with shared_strings, whose strings are the pool
 * p->strings'), so one function can free a profile whoever built it. */
#include "cli/profile/profile.h"

#include "cli/census/census.h"
#include "cli/memory/report.h"
#include "cli/util/intern.h"

#include <stdlib.h>
#include <string.h>

void cli_frame_clear(struct cli_frame *f)
{
    free(f->function);
    free(f->module);
    free(f->file);
    memset(f, 0, sizeof(*f));
}

void cli_stack_clear_frames(struct cli_stack *s)
{
    for (uint32_t i = 0; i < s->nframes && s->frames && !s->shared_strings; i++)
        cli_frame_clear(&s->frames[i]);
    free(s->frames);
    s->frames = NULL;
    s->nframes = 0;
    s->shared_strings = false;
}

void cli_profile_free(struct cli_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nstacks && p->stacks; i++) {
        cli_stack_clear_frames(&p->stacks[i]);
        free(p->stacks[i].pcs);
    }
    free(p->stacks);
    cli_intern_unref(p->strings); /* after the frames that point into it */
    free(p->threads);
    free(p->maps);
    free(p->note);
    free(p->ticks);
    cli_memory_destroy(p->memory);
    cli_profile_clear_debug_hints(p);
    cli_python_clear(&p->python);
    for (size_t i = 0; i < p->nprocesses && p->processes; i++) {
        free(p->processes[i].comm);
        free(p->processes[i].exe);
    }
    free(p->processes);
    if (p->census) {
        cli_census_free(p->census);
        free(p->census);
    }
    memset(p, 0, sizeof(*p));
}

void cli_profile_clear_debug_hints(struct cli_profile *p)
{
    for (size_t i = 0; i < p->ndebug_hints; i++) {
        free(p->debug_hints[i].module);
        free(p->debug_hints[i].build_id);
        free(p->debug_hints[i].package);
        free(p->debug_hints[i].ask_path);
    }
    free(p->debug_hints);
    p->debug_hints = NULL;
    p->ndebug_hints = 0;
}

static int cmp_stack(const void *a, const void *b)
{
    const struct cli_stack *x = a, *y = b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    /* Equal values: keep a stable, reproducible order (golden files). */
    if (x->npcs != y->npcs)
        return x->npcs < y->npcs ? -1 : 1;
    for (uint32_t i = 0; i < x->npcs; i++)
        if (x->pcs[i] != y->pcs[i])
            return x->pcs[i] < y->pcs[i] ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return 0;
}

static int cmp_stack_ptr(const void *a, const void *b)
{
    return cmp_stack(*(const struct cli_stack *const *)a, *(const struct cli_stack *const *)b);
}

/* Pointers sorted, then the stacks copied once in that order: qsort of
 * the ~200-byte stacks themselves moved each a dozen times (0.5 s of a 48 MB
 * profile's 5 s report, issue 30). Without the memory for that, in place. */
void cli_profile_sort(struct cli_profile *p)
{
    if (p->nstacks < 2)
        return;
    const struct cli_stack **order = malloc(p->nstacks * sizeof(*order));
    struct cli_stack *sorted = malloc(p->nstacks * sizeof(*sorted));
    if (!order || !sorted) {
        free(order);
        free(sorted);
        qsort(p->stacks, p->nstacks, sizeof(p->stacks[0]), cmp_stack);
        return;
    }
    for (size_t i = 0; i < p->nstacks; i++)
        order[i] = &p->stacks[i];
    qsort(order, p->nstacks, sizeof(*order), cmp_stack_ptr);
    for (size_t i = 0; i < p->nstacks; i++)
        sorted[i] = *order[i];
    free(order);
    free(p->stacks);
    p->stacks = sorted;
}

const char *cli_profile_kind_name(uint32_t kind)
{
    return kind == HI_KIND_MMAP ? "mmap" : kind == HI_KIND_PYMALLOC ? "pymalloc" : "malloc";
}

int cli_profile_kind_by_name(const char *name)
{
    if (strcmp(name, "malloc") == 0)
        return HI_KIND_MALLOC;
    if (strcmp(name, "mmap") == 0)
        return HI_KIND_MMAP;
    if (strcmp(name, "pymalloc") == 0)
        return HI_KIND_PYMALLOC;
    return -1;
}

void cli_profile_kind_sum(const struct cli_profile *p, uint32_t kind, struct cli_profile_kind_sums *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        if (s->kind != kind)
            continue;
        out->live_bytes += s->live_bytes;
        out->live_objects += s->live_objects;
        out->alloc_bytes += s->alloc_bytes;
        out->alloc_objects += s->alloc_objects;
        out->nstacks++;
    }
}
