/* stack_locs.c - a stack as program counters with the frames each expands
 * to, and display names of frames. */
#include "cli/profile/stack_locs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/process/paths.h"

static bool is_own_map(const struct cli_map *m)
{
    return m && cli_paths_is_payload(m->path, m->pathlen);
}

int cli_stack_locs(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                          struct cli_stack_loc **out, size_t *n)
{
    size_t cap = s->nframes ? s->nframes : s->npcs;
    struct cli_stack_loc *locs = calloc(cap ? cap : 1, sizeof(*locs));
    size_t cnt = 0;

    if (!locs)
        return -ENOMEM;
    if (s->nframes && s->frames) {
        /* A location is a run of inlined frames closed by the physical one;
         * a run also ends where the address changes (defensive: a profile
         * read from a file may flag frames oddly). */
        uint32_t i = 0;
        while (i < s->nframes) {
            uint32_t j = i;
            while (j + 1 < s->nframes && s->frames[j].inlined &&
                   s->frames[j + 1].addr == s->frames[i].addr)
                j++;
            locs[cnt].addr = s->frames[i].addr;
            locs[cnt].frames = &s->frames[i];
            locs[cnt].nframes = j - i + 1;
            cnt++;
            i = j + 1;
        }
    } else {
        for (uint32_t i = 0; i < s->npcs && s->pcs; i++) {
            if (is_own_map(cli_maps_find(maps, nmaps, s->pcs[i])))
                continue;
            locs[cnt].addr = s->pcs[i];
            cnt++;
        }
    }
    *out = locs;
    *n = cnt;
    return 0;
}

const char *cli_stack_frame_name(const struct cli_frame *f, char *buf, size_t len)
{
    if (f->function && f->function[0])
        return f->function;
    if (f->module && f->module[0])
        snprintf(buf, len, "%s+0x%" PRIx64, cli_paths_basename(f->module), f->module_offset);
    else
        snprintf(buf, len, "0x%" PRIx64, f->addr);
    return buf;
}
