/* cli_oom - a target that grows until the kernel's OOM killer ends it, for
 * the test of the snapshot taken at memory pressure.
 *
 *   cli_oom [--fast BYTES] [--stop BYTES]
 *
 * Allocates 256 KB/s from alloc_steady() and prints "ready". On SIGUSR1 it
 * grows from grow_until_oom(), 1 MiB blocks written through and never
 * freed: the first BYTES (default 96 MiB) at about 200 MB/s, then 32 MB/s,
 * until it is killed, or, with --stop, until it has grown BYTES (then it
 * prints "stopped" and only the steady allocation goes on). Run it in a
 * memory cgroup with a limit. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;
static volatile sig_atomic_t go;

__attribute__((noinline)) static void alloc_steady(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    sink = p;
}

__attribute__((noinline)) static void grow_until_oom(size_t n)
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double fast = 96.0 * 1048576, stop = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--fast"))
            fast = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--stop"))
            stop = atof(argv[i + 1]);
    }
    signal(SIGUSR1, on_usr1);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    double last = now_s(), debt = 0, grown = 0, gdebt = 0;
    int said = 0;
    for (;;) {
        double now = now_s(), dt = now - last;
        last = now;
        for (debt += dt * 256e3; debt >= 4096; debt -= 4096)
            alloc_steady(4096);
        if (go && stop > 0 && grown >= stop) {
            go = 0;
            printf("stopped\n");
        }
        if (go) {
            if (!said++)
                printf("growing\n");
            /* the bound is checked per block: on a loaded machine one late
             * wake-up owes tens of MiB, which once ran past --stop into the
             * cgroup's OOM killer */
            for (gdebt += dt * (grown < fast ? 200e6 : 32e6); gdebt >= 1048576 && !(stop > 0 && grown >= stop);
                 gdebt -= 1048576) {
                grow_until_oom(1048576);
                grown += 1048576;
            }
        }
        struct timespec ts = { 0, 2000000L };
        nanosleep(&ts, NULL);
    }
}
