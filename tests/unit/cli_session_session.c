/* cli_session_session.c - the targets of one command: added up to the
 * bound, each with a link of its own, closed whatever state it is in. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/session/session.h"
#include "cli/util/exitcode.h"

Test(cli_session, targets_up_to_the_bound)
{
    struct cli_session s;
    cli_session_init(&s);
    cr_expect_eq(s.ntargets, 0);
    struct cli_target *t = cli_session_add(&s, 1234);
    cr_assert_not_null(t);
    cr_expect_eq(t->pid, 1234);
    cr_expect_eq(t->state, CLI_TARGET_NEW);
    cr_expect_eq(t->link.fd, -1); /* an unconnected link */
    cr_expect_not(t->ours);
    for (size_t i = 1; i < CLI_SESSION_MAX_TARGETS; i++)
        cr_expect_not_null(cli_session_add(&s, (pid_t)(1234 + i)));
    cr_expect_null(cli_session_add(&s, 99)); /* past the bound: refused */
    cr_expect_eq(s.ntargets, CLI_SESSION_MAX_TARGETS);
    cli_session_close(&s); /* never linked: nothing to close, no crash */
}

Test(cli_session, close_ends_the_link_and_the_state)
{
    struct cli_session s;
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cli_session_init(&s);
    struct cli_target *t = cli_session_add(&s, getpid());
    cr_assert_eq(cli_client_use_fd(&t->link, sv[0]), 0);
    t->state = CLI_TARGET_LINKED; /* as cli_session_connect leaves it */
    cli_session_close(&s);
    cr_expect_eq(t->state, CLI_TARGET_CLOSED);
    cr_expect_eq(t->link.fd, -1);
    cr_expect_eq(fcntl(sv[0], F_GETFD), -1); /* the link's end is closed */
    char b;
    cr_expect_eq(read(sv[1], &b, 1), 0);     /* the other end sees EOF */
    cli_session_close(&s);                   /* twice: harmless */
    close(sv[1]);
}

Test(cli_session, no_agent_is_said_as_not_attached)
{
    /* This very process has no agent: connecting says so (quietly), and
     * the target stays unlinked. */
    struct cli_session s;
    cli_session_init(&s);
    struct cli_target *t = cli_session_add(&s, getpid());
    cr_expect_eq(cli_session_connect(t, true), CLI_EXIT_NOTATTACHED);
    cr_expect_eq(t->state, CLI_TARGET_NEW);
    cli_session_close(&s);
}
