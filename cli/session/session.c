/* session.c - the processes one command works on, each with its link. */
#include "cli/session/session.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/process/proc.h"
#include "cli/util/exitcode.h"

void cli_session_init(struct cli_session *s)
{
    memset(s, 0, sizeof(*s));
}

struct cli_target *cli_session_add(struct cli_session *s, pid_t pid)
{
    if (s->ntargets >= CLI_SESSION_MAX_TARGETS)
        return NULL;
    struct cli_target *t = &s->targets[s->ntargets++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->state = CLI_TARGET_NEW;
    cli_client_init(&t->link);
    return t;
}

static int linked(struct cli_target *t, int code)
{
    if (code == CLI_EXIT_OK)
        t->state = CLI_TARGET_LINKED;
    return code;
}

int cli_session_attach(struct cli_target *t, const struct cli_attach_options *o)
{
    return linked(t, cli_attach(o, &t->link, &t->sock));
}

int cli_session_connect(struct cli_target *t, bool quiet)
{
    return linked(t, cli_attach_connect_existing(t->pid, &t->link, &t->sock, quiet));
}

int cli_session_attach_for_request(struct cli_target *t, const struct cli_attach_options *o)
{
    return linked(t, cli_attach_for_request(o, &t->link, &t->sock, &t->ours));
}

void cli_session_close_target(struct cli_target *t)
{
    cli_client_close(&t->link);
    if (t->state != CLI_TARGET_NEW)
        t->state = CLI_TARGET_CLOSED;
}

void cli_session_close(struct cli_session *s)
{
    for (size_t i = 0; i < s->ntargets; i++) {
        if (s->targets[i].state == CLI_TARGET_LINKED)
            cli_session_close_target(&s->targets[i]);
        if (s->targets[i].last) { /* not reported */
            cli_profile_free(s->targets[i].last);
            free(s->targets[i].last);
            s->targets[i].last = NULL;
        }
    }
}

int cli_session_request_failed(struct cli_target *tg, const char *what)
{
    pid_t pid = tg->pid;
    bool died = cli_proc_exited_after_hangup(pid);
    if (died)
        fprintf(stderr, "heapinject: pid %d exited during the %s (%s)\n", (int)pid, what, tg->link.error);
    else
        fprintf(stderr, "heapinject: pid %d: %s failed: %s\n", (int)pid, what, tg->link.error);
    cli_session_close_target(tg);
    return died ? CLI_EXIT_NOPROC : CLI_EXIT_FAILURE;
}
