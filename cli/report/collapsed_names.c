/* collapsed_names.c - frame names for folded stacks. */
#include "cli/report/collapsed_names.h"

#include "cli/process/paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_collapsed_add_name(struct cli_buf *b, const char *name)
{
    size_t start = b->len, n = strlen(name);
    if (!n)
        name = "[unknown]", n = strlen(name);
    if (cli_buf_add(b, name, n))
        return -ENOMEM;
    char *s = b->data + start;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ';')
            s[i] = ':';
        else if (c < 0x20 || c == 0x7f)
            s[i] = ' ';
    }
    /* "foo 12" would read as frame "foo" with value 12 in some tools. */
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
        k--;
    if (k < n && k > 0 && s[k - 1] == ' ')
        s[k - 1] = '_';
    return 0;
}

const char *cli_collapsed_frame_label(const struct cli_frame *f, char *buf, size_t len)
{
    if (f->runtime != HI_FRAME_PYTHON || !f->file)
        return cli_stack_frame_name(f, buf, len);
    const char *base = cli_paths_basename(f->file);
    if ((!strcmp(base, "__init__.py") || !strcmp(base, "__main__.py")) && base > f->file + 1) {
        const char *dir = base - 1; /* the '/' before base: take the directory's name too */
        while (dir > f->file && dir[-1] != '/')
            dir--;
        base = dir;
    }
    if (f->line > 0)
        snprintf(buf, len, "%s (%s:%d)", f->function ? f->function : "?", base, f->line);
    else
        snprintf(buf, len, "%s (%s)", f->function ? f->function : "?", base);
    return buf;
}

int cli_collapsed_stack_line(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                             struct cli_buf *b)
{
    struct cli_stack_loc *locs;
    size_t nlocs;
    char buf[512];
    bool first = true;
    int err = 0;

    if (cli_stack_locs(s, maps, nmaps, &locs, &nlocs))
        return -ENOMEM;
    for (size_t k = nlocs; !err && k-- > 0;) {
        const struct cli_stack_loc *l = &locs[k];
        if (!l->frames) {
            err = (first ? 0 : cli_buf_addc(b, ';')) ||
                  cli_collapsed_add_name(b, cli_maps_addr_name(l->addr, maps, nmaps, buf, sizeof(buf)));
            first = false;
            continue;
        }
        for (uint32_t f = l->nframes; !err && f-- > 0;) {
            err = (first ? 0 : cli_buf_addc(b, ';')) ||
                  cli_collapsed_add_name(b, cli_collapsed_frame_label(&l->frames[f], buf, sizeof(buf)));
            first = false;
        }
    }
    if (!err && first)
        err = cli_buf_add(b, "[unknown]", 9);
    /* Direct mmap (issue 14): a leaf of its own, so a flame graph shows the
     * mapped memory as towers ending in [mmap] next to the malloc'ed. */
    if (!err && s->kind == HI_KIND_MMAP)
        err = cli_buf_add(b, ";[mmap]", 7);
    if (!err && s->kind == HI_KIND_PYMALLOC) /* objects inside pymalloc's arenas (issue 29) */
        err = cli_buf_add(b, ";[pymalloc]", 11);
    if (!b->data && !err)
        err = cli_buf_add(b, "", 0);
    free(locs);
    return err ? -ENOMEM : 0;
}
