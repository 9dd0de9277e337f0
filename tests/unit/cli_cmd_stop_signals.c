/* cli_cmd_stop_signals.c - Ctrl-C, kill and a closed terminal reach a
 * session only while it waits: after cli_stop_signals_catch each of the
 * three is held back (blocked), taken and recorded once the wait mask lets
 * it in, and the mask before is given back; SIGPIPE no longer kills. */
#include <criterion/criterion.h>
#include <signal.h>
#include <unistd.h>

#include "cli/cmd/stop_signals.h"

static void expect_held_then_taken(int sig, const sigset_t *waitmask)
{
    sigset_t pending;
    raise(sig);
    sigpending(&pending);
    cr_expect(sigismember(&pending, sig), "signal %d was not held back", sig);
    cr_expect_neq(cli_stop_signals_caught(), sig, "signal %d taken while blocked", sig);
    sigsuspend(waitmask); /* returns once the handler ran */
    cr_expect_eq(cli_stop_signals_caught(), sig, "signal %d not recorded", sig);
}

Test(cli_stop_signals, held_until_the_wait_then_recorded)
{
    sigset_t before, oldmask, waitmask, now;
    sigemptyset(&before);
    sigaddset(&before, SIGUSR1); /* a mask the caller had: given back as it was */
    sigprocmask(SIG_SETMASK, &before, NULL);

    cr_expect_eq(cli_stop_signals_caught(), 0);
    cli_stop_signals_catch(&oldmask, &waitmask);
    cr_expect(sigismember(&oldmask, SIGUSR1));
    cr_expect_not(sigismember(&oldmask, SIGINT));
    cr_expect(sigismember(&waitmask, SIGUSR1), "the wait must keep the caller's blocked signals");
    cr_expect_not(sigismember(&waitmask, SIGINT));
    cr_expect_not(sigismember(&waitmask, SIGTERM));
    cr_expect_not(sigismember(&waitmask, SIGHUP));
    sigprocmask(SIG_SETMASK, NULL, &now);
    cr_expect(sigismember(&now, SIGINT) && sigismember(&now, SIGTERM) && sigismember(&now, SIGHUP));

    expect_held_then_taken(SIGTERM, &waitmask);
    expect_held_then_taken(SIGHUP, &waitmask);
    expect_held_then_taken(SIGINT, &waitmask);

    raise(SIGPIPE); /* ignored: we are still here */
    cr_expect_eq(cli_stop_signals_caught(), SIGINT);

    sigprocmask(SIG_SETMASK, &oldmask, &now);
    sigprocmask(SIG_SETMASK, NULL, &now);
    cr_expect(sigismember(&now, SIGUSR1));
    cr_expect_not(sigismember(&now, SIGTERM));
}
