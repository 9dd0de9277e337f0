/* inj_sigmask.c - threads with unusual signal masks, for
 * tests/e2e/inject_sigmask.sh: the mask of every thread must be the same
 * after an injection as before (/proc/PID/task/TID/status SigBlk).
 *
 *   inj_sigmask all    the main thread (the one heapinject picks) blocks
 *                      every signal
 *   inj_sigmask segv   the main thread blocks only SIGSEGV
 * Either way a SIGSEGV handler is installed (a forced SIGSEGV on a thread
 * that blocks it also resets the handler: SigCgt shows that), and a second
 * thread blocks SIGUSR2 and SIGTERM only. Both sleep in nanosleep; prints
 * "ready". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void on_segv(int sig)
{
    (void)sig;
}

static void nap_forever(void)
{
    for (;;) {
        struct timespec ts = { 0, 50 * 1000000L };
        nanosleep(&ts, NULL);
    }
}

static void *other(void *arg)
{
    sigset_t s;

    (void)arg;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_SETMASK, &s, NULL);
    nap_forever();
    return NULL;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    sigset_t s;
    pthread_t th;

    if (argc < 2 || (strcmp(argv[1], "all") && strcmp(argv[1], "segv"))) {
        fprintf(stderr, "usage: inj_sigmask all|segv\n");
        return 2;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    if (pthread_create(&th, NULL, other, NULL))
        return 1;
    if (!strcmp(argv[1], "all")) {
        sigfillset(&s);
    } else {
        sigemptyset(&s);
        sigaddset(&s, SIGSEGV);
    }
    pthread_sigmask(SIG_SETMASK, &s, NULL);
    printf("ready\n");
    fflush(stdout);
    nap_forever();
}
