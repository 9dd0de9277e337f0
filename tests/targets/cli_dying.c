/* cli_dying - a target that leaks steadily and then ends by itself, for
 * the tests of a report after the process is gone.
 *
 *   cli_dying [--leak BYTES_PER_S] [--after S] [--code N | --signal SIG]
 *
 * Leaks BYTES_PER_S (default 4 MB/s) from leak_before_dying(), in blocks of
 * 4096 bytes, and frees nothing. Prints "ready". With --after, S seconds
 * after "ready" it exits with code N (default 0) or raises signal SIG (its
 * default action: SIGABRT, SIGSEGV, SIGKILL...). Without --after it runs
 * until killed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;

__attribute__((noinline)) static void leak_before_dying(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 3, n);
    sink = p;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double rate = 4e6, after = 0;
    int code = 0, sig = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--leak"))
            rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--after"))
            after = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--code"))
            code = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--signal"))
            sig = atoi(argv[i + 1]);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    double start = now_s(), last = start, debt = 0;
    for (;;) {
        double now = now_s();
        debt += (now - last) * rate;
        last = now;
        for (; debt >= 4096; debt -= 4096)
            leak_before_dying(4096);
        if (after > 0 && now - start >= after) {
            printf("ending\n");
            if (sig) {
                signal(sig, SIG_DFL);
                raise(sig);
            }
            exit(code);
        }
        struct timespec ts = { 0, 2000000L };
        nanosleep(&ts, NULL);
    }
}
