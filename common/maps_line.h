/* maps_line.h - one line of /proc/PID/maps, parsed in place.
 *
 * "start-end perms offset dev:dev inode   path", the path optional and
 * possibly ending in " (deleted)". The one parser of this format that the
 * injector (injector/maps.c) and the cli (profiles' maps text, the
 * symbolizer's modules) use; smaps' extra lines are cli/memory/smaps.c's.
 */
#ifndef HI_COMMON_MAPS_LINE_H
#define HI_COMMON_MAPS_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hi_maps_line {
    uint64_t start, end, offset, inode;
    unsigned dev_major, dev_minor;
    char perms[5];
    const char *path;  /* into the line; NULL when there is none */
    size_t pathlen;    /* without " (deleted)" */
    bool deleted;      /* the kernel appended " (deleted)" */
};

/* Parses the line [p, end) (without its newline). true when it names a
 * range (start < end) with perms and offset; the fields after those are
 * optional (0 / NULL when missing). No allocation, no copy. */
bool hi_maps_line_parse(const char *p, const char *end, struct hi_maps_line *m);

#endif /* HI_COMMON_MAPS_LINE_H */
