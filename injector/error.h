/* error.h - why an injection failed: the codes every injector module
 * returns and the cli maps to exit codes (cli/cmd/main.c,
 * cli/util/exitcode.h). Kept apart from inject.h so that low modules need
 * not include the whole injector interface for them. */
#ifndef HI_INJECTOR_ERROR_H
#define HI_INJECTOR_ERROR_H

enum inj_error {
    INJ_OK = 0,
    INJ_ENOPROC = -1,     /* no such process */
    INJ_EPERM = -2,       /* permission denied (ptrace or /proc) */
    INJ_ETRACED = -3,     /* already traced by another tracer */
    INJ_ESTATIC = -4,     /* statically linked: no dynamic loader */
    INJ_EARCH = -5,       /* different architecture */
    INJ_ELIB = -6,        /* library missing or dlopen failed in the target */
    INJ_EEXITED = -7,     /* target exited during injection */
    INJ_ETIMEOUT = -8,    /* never reached a safe point */
    INJ_ESYMBOL = -9,     /* symbol not found in the library */
    INJ_EINTERNAL = -10,  /* anything else (message in result->error) */
    INJ_ESECCOMP = -11,   /* injected call killed by a seccomp filter (SIGSYS) */
    INJ_ESTATE = -12,     /* cannot run our code now: stopped (SIGSTOP), waiting
                             in vfork, a vfork child sharing its parent's memory */
    INJ_ENOTPROCESS = -13,/* a thread id, not a process id */
    INJ_EFILES = -14,     /* --via gdb: a file gdb would open is not a regular
                             file (gdb would wait on a FIFO for ever) */
};

#endif /* HI_INJECTOR_ERROR_H */
