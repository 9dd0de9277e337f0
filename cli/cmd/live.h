/* live.h - progress of a running session on stderr: a status line redrawn
 * every tick on a terminal, a plain line now and then otherwise. */
#ifndef HI_CLI_LIVE_H
#define HI_CLI_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/proto.h"

struct cli_live {
    bool tty;             /* stderr is a terminal: redraw one line */
    bool quiet;           /* print nothing */
    bool drawn;           /* a status line is on screen */
    double last_line_s;   /* when the last plain line was printed */
    double prev_s;        /* elapsed time of the previous tick */
    uint64_t prev_alloc;  /* exact bytes allocated at the previous tick */
    double alloc_rate;    /* bytes/s between the last two ticks */
    pid_t pid;            /* the target: its RSS split is read per line */
};

void cli_live_init(struct cli_live *l, bool quiet, pid_t pid);

/* Shows the state after a tick. elapsed_s: session time; duration_s: the
 * planned length (<= 0: until interrupted). */
void cli_live_tick(struct cli_live *l, const struct hi_tick *t, double elapsed_s, double duration_s);

/* Erases the status line so that other messages start on a clean line. */
void cli_live_clear(struct cli_live *l);

#endif /* HI_CLI_LIVE_H */
