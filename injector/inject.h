/* inject.h - load a shared library into a live process and call a function in it.
 *
 * The engine under `heapinject inject` and `heapinject -p PID`. Two methods:
 * ptrace (default, injector/ptrace_*.c) and gdb (injector/gdb.c, a `gdb -p
 * PID -batch` fallback). Both leave the target exactly as it was, apart from
 * the loaded library and whatever the called function does.
 */
#ifndef HI_INJECTOR_INJECT_H
#define HI_INJECTOR_INJECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/error.h"

enum inj_method {
    INJ_VIA_PTRACE = 0,
    INJ_VIA_GDB = 1,
};

struct inj_options {
    pid_t pid;
    const char *library;   /* path as seen by the injector (cli's namespace) */
    const char *symbol;    /* NULL: only dlopen */
    const char *argument;  /* string passed to symbol(const char *); may be NULL */
    enum inj_method method;
    int timeout_ms;        /* bound on waiting for a safe point; default 5000 */
    bool verbose;          /* progress on stderr */
    bool profiler_syscalls; /* the called symbol is heapinject_start: check the
                              seccomp filters for its system calls too */
    bool program_checked;  /* the caller has just run inj_check_target: the
                              process's state (exists, permission, traced,
                              stopped, vfork) is checked again, its program
                              (ELF class, static, libc mapped) is not: the
                              maps read and libc's resolution that follow
                              catch an exec in between */
};

struct inj_result {
    uint64_t handle;       /* dlopen() return value in the target */
    uint64_t load_address; /* link_map l_addr of the library */
    bool called;           /* symbol was called */
    int64_t return_value;  /* its return value (rax), sign-extended from int */
    /* CLOCK_MONOTONIC ns of the ptrace path's milestones (0: not reached,
     * or --via gdb): ready to seize (the library placed, maps read, libc
     * resolved, unwinder set up), the held thread seized,
     * at a safe point, dlopen returned, detached. */
    uint64_t prepared_ns, seized_ns, safe_ns, loaded_ns, detached_ns;
    char error[512];       /* on failure: what happened and what to do */
};


/* Loads opts->library into opts->pid with dlopen(RTLD_NOW) and, when
 * opts->symbol is set, calls symbol(argument). Returns INJ_OK or a negative
 * enum inj_error with a message in result->error. The target keeps running
 * in every case; on failure it is left as it was. */
int inj_inject(const struct inj_options *opts, struct inj_result *result);

/* Preflight checks shared with the cli (exists, permission, not traced,
 * dynamically linked, same architecture). Returns INJ_OK or an enum inj_error
 * with a message in err. */
int inj_check_target(pid_t pid, char *err, size_t errlen);

/* The same; with program false only the process's state part (what
 * inj_inject re-checks when opts->program_checked). */
int inj_check_target_state(pid_t pid, bool program, char *err, size_t errlen);

#endif /* HI_INJECTOR_INJECT_H */
