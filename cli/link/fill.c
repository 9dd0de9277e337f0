/* fill.c - completing a snapshot from /proc when the agent could not read
 * its own (cli/link/fill.h). */
#include "cli/link/fill.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/process/proc.h"

const char *cli_fill_from_proc(pid_t pid, struct cli_profile *p)
{
    static char note[160];
    int maps = 0, rss = 0;

    if (!p->maps_len) {
        size_t len = 0;
        char *text = cli_proc_maps_text(pid, &len);
        if (text) {
            free(p->maps);
            p->maps = text;
            p->maps_len = len;
            maps = 1;
        }
    }
    if (!p->rss_bytes) {
        struct cli_proc_mem m;
        if (cli_proc_mem(pid, &m) == 0 && m.rss) {
            p->rss_bytes = m.rss;
            rss = 1;
        }
    }
    note[0] = '\0';
    if (maps || rss)
        snprintf(note, sizeof(note), "the profiler could not read the process's %s%s%s (out of file "
                 "descriptors?): heapinject read %s from /proc itself, after the snapshot",
                 maps ? "maps" : "", maps && rss ? " and " : "", rss ? "RSS" : "", maps && rss ? "them" : "it");
    return note;
}
