/* children.h - the child processes of a target: a postmaster, an nginx
 * master or a gunicorn arbiter sits idle while its children do the work,
 * and a profile of the parent alone says nothing useful about them. */
#ifndef HI_CLI_CHILDREN_H
#define HI_CLI_CHILDREN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLI_CHILDREN_LISTED 8 /* the largest children kept by RSS; the count is of all */

struct cli_child {
    pid_t pid;
    uint64_t rss;   /* bytes */
    char comm[64];  /* printable (cli_proc_comm) */
};

struct cli_children {
    size_t count;            /* every child found */
    uint64_t total_rss;      /* of every child */
    size_t nlisted;          /* the largest ones, by RSS, descending */
    struct cli_child listed[CLI_CHILDREN_LISTED];
};

/* Fills *c with the processes whose parent is pid (the PPid of each
 * /proc/N/stat; kernel threads are never a program's children). A /proc
 * that cannot be read leaves count 0. */
void cli_children_find(pid_t pid, struct cli_children *c);

#endif /* HI_CLI_CHILDREN_H */
