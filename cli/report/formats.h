/* formats.h - the file formats heapinject writes, and what they share.
 *
 * Each writer turns one symbolized struct cli_profile into one file format
 * (pprof, gperftools heap text, collapsed stacks, SVG flame graph, massif,
 * time-series CSV). Writers only read the profile and write to `out`; they
 * never talk to the target. They return 0 or -errno (-EIO when `out` fails,
 * -EINVAL on bad options, -ENOMEM).
 *
 * The helpers below are shared by the writers and readers
 * (the writers in cli/report/, the readers cli/profile/read*.c and
 * cli/profile/diff.c) and are not meant
 * for other callers.
 */
#ifndef HI_CLI_REPORT_FORMATS_H
#define HI_CLI_REPORT_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/util/hindex.h"
#include "cli/profile/profile.h"

/* What a writer needs besides the profile. Zero-initialized is valid. */
struct cli_format_options {
    /* live_bytes (default when NULL) | alloc_bytes | live_objects |
     * alloc_objects: the value of collapsed stacks and the SVG flame graph. */
    const char *value;
    /* Path of the target's main executable, when known: pprof puts its
     * mapping first (pprof's convention for "the binary"). NULL = the first
     * file in the maps. */
    const char *binary_hint;
    /* The target's command line for massif's "cmd:" line; NULL = "pid N". */
    const char *command;
    /* pprof: write addresses and mappings only, no functions or lines, so
     * that pprof symbolizes from the binaries (--symbolize=none). Profiles
     * whose frames carry no function names are written that way anyway. */
    bool no_symbols;
};

typedef int (*cli_format_writer)(const struct cli_profile *p,
                                 const struct cli_format_options *opt, FILE *out);

/* The writers are listed, with text and json, in report.c's one table. */

/* ---- shared helpers ------------------------------------------------------ */

enum cli_value {
    CLI_VALUE_LIVE_BYTES,
    CLI_VALUE_ALLOC_BYTES,
    CLI_VALUE_LIVE_OBJECTS,
    CLI_VALUE_ALLOC_OBJECTS,
};

/* Parses a --value name (NULL = live_bytes). 0 or -EINVAL. */
int cli_format_value_parse(const char *name, enum cli_value *v);
const char *cli_format_value_name(enum cli_value v);
double cli_format_stack_value(const struct cli_stack *s, enum cli_value v);

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
int cli_format_maps_parse(const char *text, size_t len, struct cli_map **out, size_t *n);

/* The map containing addr, or NULL. maps sorted by start (as in /proc). */
const struct cli_map *cli_format_maps_find(const struct cli_map *maps, size_t n, uint64_t addr);

/* One program counter of a stack with the frames it expands to. */
struct cli_format_loc {
    uint64_t addr;                   /* return address as captured */
    const struct cli_frame *frames;  /* innermost first; NULL if unsymbolized */
    uint32_t nframes;
};

/* The stack as a list of locations, innermost first, in a malloc'ed array
 * (*out, *n; free() it). With symbolized frames the locations are the
 * frames grouped by program counter (heapinject's own frames already
 * removed); without, the raw PCs minus those inside heapinject's own payload
 * (a mapping whose file is named libheapinject.so). 0 or -ENOMEM. */
int cli_format_stack_locs(const struct cli_stack *s, const struct cli_map *maps, size_t nmaps,
                          struct cli_format_loc **out, size_t *n);

/* A display name for a frame: its function, else "module+0xoffset", else
 * "0xaddr". Returns f->function or buf. */
const char *cli_format_frame_name(const struct cli_frame *f, char *buf, size_t len);

/* Same for a PC that has no frame, using the maps. Returns buf. */
const char *cli_format_addr_name(uint64_t addr, const struct cli_map *maps, size_t nmaps,
                                 char *buf, size_t len);

/* Basename of a path (pointer into it). */
const char *cli_format_basename(const char *path); /* NULL stays NULL */

/* A growable byte buffer (owned; free(b->data)). Appends return 0 or -ENOMEM. */
struct cli_buf {
    char *data;
    size_t len, cap;
};
int cli_buf_add(struct cli_buf *b, const void *data, size_t len);
int cli_buf_addf(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_buf_addc(struct cli_buf *b, char c);

/* String interning: index of a string in an append-only table, adding it on
 * first sight. Copies the strings. index 0 is the first string added. */
struct cli_strtab {
    char **strs;
    size_t n, cap;
    struct cli_hindex index; /* hash of a string -> its index in strs */
};
/* Returns the index (>= 0) or -ENOMEM. s may be NULL: treated as "". */
long cli_strtab_intern(struct cli_strtab *t, const char *s);
long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len);
void cli_strtab_free(struct cli_strtab *t);

/* uint64 -> uint64 map (keys != 0 not required; values any). */
struct cli_u64map {
    uint64_t *vals;          /* by entry */
    size_t n, cap;
    struct cli_hindex index; /* key -> entry */
};
/* 0 if found (*val set), -ENOENT if not. */
int cli_u64map_get(const struct cli_u64map *m, uint64_t key, uint64_t *val);
int cli_u64map_put(struct cli_u64map *m, uint64_t key, uint64_t val); /* 0 or -ENOMEM */
void cli_u64map_free(struct cli_u64map *m);

/* Writes the buffer to out; 0 or -EIO. */
int cli_format_write_all(FILE *out, const void *data, size_t len);

#endif /* HI_CLI_REPORT_FORMATS_H */
