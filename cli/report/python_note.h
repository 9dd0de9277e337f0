/* python_note.h - one line on the target's Python frames (issue 29 item
 * 5): how many samples carry them and why the others do not, or why none
 * do. Shared by the text report and html. */
#ifndef HI_CLI_REPORT_PYTHON_NOTE_H
#define HI_CLI_REPORT_PYTHON_NOTE_H

#include <stddef.h>

#include "cli/profile/profile.h"

/* The line into buf (no newline): 1, or 0 when there is nothing to say
 * (not a Python process, or a profile that does not know). */
int cli_python_note(const struct cli_profile *p, char *buf, size_t len);

#endif /* HI_CLI_REPORT_PYTHON_NOTE_H */
