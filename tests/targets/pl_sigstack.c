/* pl_sigstack - allocates only inside a signal handler, which runs on an
 * alternate signal stack and interrupts code built without frame pointers,
 * for tests/e2e/payload_sigstack.sh. A 2 ms interval timer sends SIGALRM;
 * the handler (on_tick -> alloc_in_handler) replaces one block of a ring of
 * 64. The main thread does nothing else than sleep in wait_loop, so the
 * handler never interrupts an allocation (malloc is not async-signal-safe).
 * Prints "ready". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void *volatile ring[64];
static volatile unsigned long ticks;

__attribute__((noinline, optimize("omit-frame-pointer"))) static void alloc_in_handler(void)
{
    unsigned i = (unsigned)(ticks++ % 64);
    void *old = ring[i];
    ring[i] = malloc(64 + i);
    free(old);
}

__attribute__((noinline)) static void on_tick(int sig)
{
    (void)sig;
    alloc_in_handler();
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void wait_loop(void)
{
    for (;;)
        usleep(1000);
}

int main(void)
{
    static char alt[64 * 1024] __attribute__((aligned(16)));
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
    struct sigaction sa;
    struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    printf("ready\n");
    fflush(stdout);
    wait_loop();
}
