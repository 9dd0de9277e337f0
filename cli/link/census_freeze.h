/* census_freeze.h - the program's threads held still (ptrace) from the agent's
 * READY to its FORKED, so that their registers and thread pointers are
 * census roots. See freeze.c. */
#ifndef HI_CLI_CENSUS_FREEZE_H
#define HI_CLI_CENSUS_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/proto.h"

/* Threads held at most (as many as the agent's table, PL_CENSUS_MAX_THREADS):
 * the others run on, counted in the report. */
#define CLI_CENSUS_MAX_HELD 32768

struct inj_thread;
struct cli_client;
struct cli_census;

struct cli_census_freeze {
    struct inj_thread *threads; /* seized; NULL once let go */
    size_t nthreads;
    struct hi_census_regs *regs; /* of the threads that stopped */
    size_t nregs;
    double t0_ms, held_ms;      /* when the first was stopped; for how long */
    double seize_ms;            /* seizing and interrupting them all took */
    bool over_bound;            /* let go before the fork: the hold would pass its bound (why) */
    char why[128];              /* no registers: why (ptrace refused) */
};

/* Seizes and stops every thread of pid but agent_tid and reads their
 * registers. 0 (nregs may still be 0: why says so) or -errno. */
int cli_census_freeze(struct cli_census_freeze *fz, pid_t pid, pid_t agent_tid);

/* Lets every held thread go (idempotent); sets held_ms. */
void cli_census_thaw(struct cli_census_freeze *fz);

void cli_census_freeze_free(struct cli_census_freeze *fz);

/* A census over an open client: PREP, threads held and their registers
 * sent, REQ, threads let go at FORKED (or when the 2 s bound comes), then the
 * records into c. Fills c->held_ms, c->threads_held and c->regs_why. 0 or
 * -errno as cli_client_census. */
int cli_census_take(struct cli_client *cl, struct cli_census *c, int timeout_ms);

#endif /* HI_CLI_CENSUS_FREEZE_H */
