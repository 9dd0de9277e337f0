/* children.h - the child processes of a target: a postmaster, an nginx
 * master or a gunicorn arbiter sits idle while its children do the work,
 * and a profile of the parent alone says nothing useful about them. */
#ifndef HI_CLI_CHILDREN_H
#define HI_CLI_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLI_CHILDREN_LISTED 8 /* the largest children kept by RSS; the count is of all */

struct cli_child {
    pid_t pid;
    uint64_t rss;   /* bytes */
    bool forked_during_session; /* started after the session's start */
    char comm[64];  /* printable (cli_proc_comm) */
};

struct cli_children {
    size_t count;            /* every child found */
    size_t forked_during_session; /* of those, started after the session began */
    uint64_t total_rss;      /* of every child */
    size_t nlisted;          /* the largest ones, by RSS, descending */
    struct cli_child listed[CLI_CHILDREN_LISTED];
};

/* Fills *c with the processes whose parent is pid (the PPid of each
 * /proc/N/stat; kernel threads are never a program's children). A /proc
 * that cannot be read leaves count 0. Children that started at or after
 * session_ticks (cli_children_now_ticks() at the session's start; 0: not
 * asked) are counted as forked during the session. */
void cli_children_find(pid_t pid, uint64_t session_ticks, struct cli_children *c);

/* Now, in the unit of /proc/N/stat's starttime (clock ticks since boot);
 * 0 when /proc/uptime cannot be read. */
uint64_t cli_children_now_ticks(void);

/* The parent of pid from /proc/PID/stat; 0 when unreadable. */
pid_t cli_children_parent(pid_t pid);

/* Every descendant of root alive now (children, their children, ...), in
 * breadth-first order, at most cap into out. Kernel threads are none.
 * Returns how many; 0 when /proc cannot be read. */
size_t cli_children_descendants(pid_t root, pid_t *out, size_t cap);

#endif /* HI_CLI_CHILDREN_H */
