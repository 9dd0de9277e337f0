/* report.h - the memory breakdown as the user sees it: notes that explain
 * what the sampled profile cannot, the text block, the JSON "memory"
 * object (docs/JSON.md), and collecting it all for a profile. */
#ifndef HI_CLI_MEMORY_REPORT_H
#define HI_CLI_MEMORY_REPORT_H

#include <stdio.h>
#include <sys/types.h>

#include "cli/memory/breakdown.h"
#include "cli/profile/profile.h"
#include "cli/util/json_value.h"

/* Adds the notes that need the profile too (RSS growth vs the sampled live
 * heap, runtimes that keep their own heaps, pages never touched). p may be
 * NULL (status of a process that is not attached). */
void cli_memory_add_notes(struct cli_memory *m, const struct cli_profile *p);

/* Collecting it from a live process: cli/link/memory_collect.h. */

void cli_memory_destroy(struct cli_memory *m);

/* The text block ("Memory: RSS ..., parts, allocator, notes"); each line
 * starts with indent. */
void cli_memory_write_text(const struct cli_memory *m, const char *indent, FILE *out);

/* The JSON object (no key, no trailing comma), lines indented by indent. */
void cli_memory_write_json(const struct cli_memory *m, const char *indent, FILE *out);

/* The "memory" object o of a saved JSON profile (NULL or null: *out NULL).
 * 0, -ENOMEM, or -EBADMSG with a reason in why. */
int cli_memory_from_json(const json_t *o, struct cli_memory **out,
                         char *why, size_t whylen);

#endif /* HI_CLI_MEMORY_REPORT_H */
