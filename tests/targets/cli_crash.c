/* cli_crash - a target that allocates steadily and then crashes, for the
 * tests of the snapshot taken in heapinject's fatal signal handler.
 *
 *   cli_crash [--how segv|abort|raise|none] [--delay S] [--gasp MIB] [--own-handler] [--thread]
 *
 * Allocates 4 MB/s from alloc_steady() (4 KiB blocks, never freed) and
 * prints "ready". On SIGUSR1 it goes on for S seconds (default 1.5), then,
 * in about 100 ms, allocates MIB MiB (default 64) from last_gasp() (1 MiB
 * blocks, never freed: a function seen nowhere else) and dies: a NULL
 * dereference (segv, the default), abort() or raise(SIGSEGV) (raise: should
 * raise return, it prints "raise returned" and exits 0). With --how none
 * it only runs.
 * With --thread the last gasp and the death happen in a second thread,
 * started then, while the main thread goes on allocating.
 * On SIGUSR2 it forks a child that prints "child PID" and sleeps 10 s.
 *
 * --own-handler installs a SIGSEGV handler of its own before "ready" (it
 * prints "own handler ran" and exits 42); every 50 ms it reads its handler
 * back and prints "handler replaced" once if it is not its own any more. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static volatile sig_atomic_t go, fork_child;

__attribute__((noinline)) static void alloc_steady(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    sink = p;
}

__attribute__((noinline)) static void last_gasp(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 2, n);
    sink = p;
}

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

static void on_usr2(int sig)
{
    (void)sig;
    fork_child = 1;
}

static void own_segv(int sig)
{
    (void)sig;
    static const char msg[] = "own handler ran\n";
    if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0) {
    }
    _exit(42);
}

struct death {
    const char *how;
    int gasp;
};

/* The last gasp, then the death. */
static void *die(void *arg)
{
    const struct death *d = arg;
    printf("dying\n");
    for (int i = 0; i < d->gasp; i++)
        last_gasp(1u << 20);
    if (!strcmp(d->how, "abort"))
        abort();
    if (!strcmp(d->how, "raise")) {
        raise(SIGSEGV); /* sent, not a fault: nothing runs it again */
        printf("raise returned\n");
        exit(0);
    }
    volatile int *volatile nowhere = NULL; /* volatile both: a real store, kept by the compiler */
    *nowhere = 1;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *how = "segv";
    double delay = 1.5;
    int own = 0, gasp = 64, in_thread = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--how") && i + 1 < argc)
            how = argv[++i];
        else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
            delay = atof(argv[++i]);
        else if (!strcmp(argv[i], "--gasp") && i + 1 < argc)
            gasp = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--thread"))
            in_thread = 1;
        else if (!strcmp(argv[i], "--own-handler"))
            own = 1;
    }
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, on_usr2);
    if (own)
        signal(SIGSEGV, own_segv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    double last = now_s(), debt = 0, end = 0;
    int replaced = 0;
    for (;;) {
        double now = now_s();
        debt += (now - last) * 4e6;
        last = now;
        for (; debt >= 4096; debt -= 4096)
            alloc_steady(4096);
        if (own && !replaced) {
            struct sigaction sa;
            if (sigaction(SIGSEGV, NULL, &sa) == 0 && sa.sa_handler != own_segv) {
                printf("handler replaced\n");
                replaced = 1;
            }
        }
        if (fork_child) {
            fork_child = 0;
            pid_t c = fork();
            if (c == 0) {
                printf("child %d\n", (int)getpid());
                sleep(10);
                _exit(0);
            }
        }
        if (go && !end)
            end = now + delay;
        if (end && now >= end && strcmp(how, "none")) {
            static struct death d;
            static pthread_t th;
            d.how = how;
            d.gasp = gasp;
            if (!in_thread)
                die(&d);
            else if (!th && pthread_create(&th, NULL, die, &d) != 0)
                die(&d);
        }
        struct timespec ts = { 0, 2000000L };
        nanosleep(&ts, NULL);
    }
}
