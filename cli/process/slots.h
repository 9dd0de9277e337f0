/* slots.h - what the target's malloc-family GOT slots hold, read from
 * outside through /proc/PID/mem: the cli's own proof, after a detach, that
 * no slot still points into the profiler (or exactly which do). */
#ifndef HI_CLI_PROCESS_SLOTS_H
#define HI_CLI_PROCESS_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cli_slots_report {
    unsigned modules;       /* modules whose slots were read */
    unsigned with_slots;    /* of them, those with at least one slot: the modules
                               status and detach name (one count, one meaning) */
    unsigned slots;         /* malloc-family JUMP_SLOT/GLOB_DAT slots read */
    unsigned hooked;        /* of them, pointing into libheapinject.so */
    unsigned unreadable;    /* modules whose file or memory could not be read */
    bool payload_mapped;    /* libheapinject.so is mapped in the process */
    pid_t tid;              /* the live thread whose /proc view was used */
    char which[400];        /* the hooked ones: "module:function, ..." */
};

/* Reads every malloc-family slot of every module mapped in pid, through a
 * live thread's /proc entries (a zombie main thread's read empty), and
 * counts those that point into libheapinject.so. 0, or -errno when the
 * process cannot be read at all (-ESRCH: it is gone). */
int cli_slots_check(pid_t pid, struct cli_slots_report *r);

/* Whether libheapinject.so is mapped in pid now (1), not (0), or -errno
 * (-ESRCH also when no mapping is left: the process is exiting). */
int cli_slots_payload_mapped(pid_t pid);

/* Whose malloc pid calls, read from outside before anything is attached:
 * the file of the module that its modules' bound malloc slots point into
 * (the first one met in the maps' order), copied to path. 1 when found; 0
 * when no slot tells (none bound yet, or our hooks are in place); -errno
 * when the process cannot be read. */
int cli_slots_malloc_module(pid_t pid, char *path, size_t len);

#endif /* HI_CLI_PROCESS_SLOTS_H */
