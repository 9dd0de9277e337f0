/* exitcode.h - what heapinject's exit status means (documented in the man page). */
#ifndef HI_CLI_EXITCODE_H
#define HI_CLI_EXITCODE_H

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILURE = 1,     /* generic failure (message on stderr) */
    CLI_EXIT_USAGE = 2,       /* bad command line, or -o cannot be written (checked first) */
    CLI_EXIT_NOPROC = 3,      /* no such process / target exited (its last snapshot still reported) */
    CLI_EXIT_PERM = 4,        /* permission denied */
    CLI_EXIT_UNSUPPORTED = 5, /* static binary, foreign arch, static allocator */
    CLI_EXIT_BUSY = 6,        /* already traced / already attached */
    CLI_EXIT_NOTATTACHED = 7, /* no agent in the target */
    CLI_EXIT_TIMEOUT = 8,     /* no safe point in time */
    CLI_EXIT_BADFILE = 9,     /* corrupt or foreign profile file */
};

#endif /* HI_CLI_EXITCODE_H */
