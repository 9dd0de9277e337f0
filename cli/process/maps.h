/* maps.h - /proc/PID/maps text as an array of mappings, and naming an
 * address by the file mapped there. */
#ifndef HI_CLI_PROCESS_MAPS_H
#define HI_CLI_PROCESS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of /proc/PID/maps. path points into the maps text (not
 * NUL-terminated: pathlen bytes, " (deleted)" already cut off). */
struct cli_map {
    uint64_t start, end, offset;
    char perms[5];
    const char *path;
    size_t pathlen;
    bool deleted;
};

/* Parses maps text into a malloc'ed array (*out, *n; free() it). Lines that
 * do not parse are skipped. 0 or -ENOMEM. */
int cli_maps_parse(const char *text, size_t len, struct cli_map **out, size_t *n);

/* The map containing addr, or NULL. maps sorted by start (as in /proc). */
const struct cli_map *cli_maps_find(const struct cli_map *maps, size_t n, uint64_t addr);

/* Same for a PC that has no frame, using the maps. Returns buf. */
const char *cli_maps_addr_name(uint64_t addr, const struct cli_map *maps, size_t nmaps,
                                 char *buf, size_t len);


#endif /* HI_CLI_PROCESS_MAPS_H */
