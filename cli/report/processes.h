/* processes.h - the processes of a profile of several (issue 28) in the
 * text and JSON reports: a table per process and each stack's process. */
#ifndef HI_CLI_REPORT_PROCESSES_H
#define HI_CLI_REPORT_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/profile/profile.h"

/* What a process's stacks hold (estimated), and its largest stack. */
struct cli_process_sums {
    double live_bytes, alloc_bytes;
    size_t nstacks;
    long top_stack;          /* index into p->stacks, -1 when none */
};

void cli_process_sums(const struct cli_profile *p, int32_t pid, struct cli_process_sums *out);

/* Text: the line that opens a report of several processes ("heapinject:
 * 3 processes (pids ...), 2.0 s from the first attach to the last
 * snapshot, ..."); false (nothing written) for a profile of one. */
bool cli_report_processes_header(const struct cli_profile *p, FILE *out);

/* Text: one row per process (RSS, live, allocated, top stack's innermost
 * function), for a profile of several; nothing for one. */
void cli_report_processes_table(const struct cli_profile *p, FILE *out);

/* Text: "pid N (comm) " for stack s of a profile of several, into buf;
 * "" for a profile of one. Printable. Returns buf. */
const char *cli_report_stack_process(const struct cli_profile *p, const struct cli_stack *s, char *buf, size_t len);

/* JSON: the "processes" member (docs/JSON.md), two spaces of indent,
 * with its trailing ",\n". */
void cli_report_processes_json(const struct cli_profile *p, FILE *out);

struct cli_children; /* cli/process/children.h */

/* The command that profiles pid and all its children, one session each,
 * and writes one report of them all (issue 28, item 6), into buf. */
const char *cli_report_children_command(int32_t pid, double duration_s, char *buf, size_t len);

/* stderr at the end of a session of a process with children: how many,
 * how many started during the session, the largest with their RSS, and
 * the command above. Nothing when c has no child. */
void cli_report_children_notice(int32_t pid, const struct cli_children *c, double duration_s, FILE *out);

/* JSON: the "children" member (docs/JSON.md) with its trailing ",\n";
 * null when c is NULL (a saved profile: not looked at). */
void cli_report_children_json(int32_t pid, const struct cli_children *c, double duration_s, FILE *out);

#endif /* HI_CLI_REPORT_PROCESSES_H */
