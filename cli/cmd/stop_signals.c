/* stop_signals.c - Ctrl-C, kill and a closed terminal end a session at its
 * next wait (stop_signals.h). */
#include "cli/cmd/stop_signals.h"

#include <stddef.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

void cli_stop_signals_catch(sigset_t *oldmask, sigset_t *waitmask)
{
    static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa = { .sa_handler = on_signal };
    sigset_t block;

    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
        sigaction(stops[i], &sa, NULL);
        sigaddset(&block, stops[i]);
    }
    signal(SIGPIPE, SIG_IGN);
    sigprocmask(SIG_BLOCK, &block, oldmask);
    *waitmask = *oldmask;
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
        sigdelset(waitmask, stops[i]);
}

int cli_stop_signals_caught(void)
{
    return stop_signal;
}
