/* maps_line.h - one line of /proc/PID/maps, parsed in place.
 *
 * "start-end perms offset dev:dev inode   path", the path optional and
 * possibly ending in " (deleted)". The one parser of this format that the
 * injector (injector/maps.c), the cli (profiles' maps text, the
 * symbolizer's modules) and the payload (its /proc reads, the census) use;
 * smaps' extra lines are cli/memory/smaps.c's. hi_maps_lines walks a
 * text's lines, so that the loop is written once.
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

/* The lines of a maps (or smaps) text, one at a time, without their
 * newline. A last line without a newline is a line too, unless `whole` is
 * set: then it is left at p (a read cut it; the caller keeps it for the
 * next read). */
struct hi_maps_lines {
    const char *p, *end;
    bool whole;
};

static inline struct hi_maps_lines hi_maps_lines_of(const char *text, size_t len)
{
    struct hi_maps_lines it = { text, text ? text + len : NULL, false };
    return it;
}

/* The next line [*line, *line_end): true; false at the end of the text. */
bool hi_maps_lines_next(struct hi_maps_lines *it, const char **line, const char **line_end);

/* The next line that parses (hi_maps_line_parse), the others skipped:
 * true with it in *m; false at the end of the text. */
bool hi_maps_lines_next_parsed(struct hi_maps_lines *it, struct hi_maps_line *m);

#endif /* HI_COMMON_MAPS_LINE_H */
