/* formats.h - the file formats heapinject writes, and what they share.
 *
 * Each writer turns one symbolized struct cli_profile into one file format
 * (pprof, gperftools heap text, collapsed stacks, SVG flame graph, massif,
 * time-series CSV). Writers only read the profile and write to `out`; they
 * never talk to the target. They return 0 or -errno (-EIO when `out` fails,
 * -EINVAL on bad options, -ENOMEM).
 *
 * The helpers the writers share live in the layers below (util/buf.h,
 * util/strtab.h, util/u64map.h, process/maps.h, process/paths.h, profile/values.h, profile/stack_locs.h);
 * this header includes them for the writers.
 */
#ifndef HI_CLI_REPORT_FORMATS_H
#define HI_CLI_REPORT_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* The helpers the writers and readers share, each in its own layer. */
#include "cli/process/maps.h"
#include "cli/process/paths.h"
#include "cli/profile/stack_locs.h"
#include "cli/profile/values.h"
#include "cli/util/buf.h"
#include "cli/util/strtab.h"
#include "cli/util/u64map.h"

#endif /* HI_CLI_REPORT_FORMATS_H */
