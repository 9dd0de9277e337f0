/* smaps_bench - cost of the cli's memory breakdown of a process: reading
 * /proc/PID/smaps, parsing it, and classifying every mapping
 * (cli_memory_read), timed wall-clock and CPU, N times.
 * usage: smaps_bench PID [N]; prints "maps=M wall_ms median=.. max=.. cpu_ms median=..". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/memory/breakdown.h"
#include "cli/memory/smaps.h"

static double clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    pid_t pid = (pid_t)atoi(argv[1]);
    int n = argc > 2 ? atoi(argv[2]) : 10;
    double wall[1000], cpu[1000], smaps_only[1000];
    if (n < 1 || n > 1000)
        return 2;
    size_t maps = 0;
    for (int i = 0; i < n; i++) {
        struct cli_smaps s;
        double c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (cli_smaps_read(pid, &s) != 0)
            return 1;
        smaps_only[i] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        maps = s.n;
        cli_smaps_free(&s);
        struct cli_memory m;
        double w0 = clock_ms(CLOCK_MONOTONIC);
        c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (cli_memory_read(pid, NULL, &m) != 0)
            return 1;
        wall[i] = clock_ms(CLOCK_MONOTONIC) - w0;
        cpu[i] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        cli_memory_free(&m);
    }
    qsort(wall, (size_t)n, sizeof(double), cmp);
    qsort(cpu, (size_t)n, sizeof(double), cmp);
    qsort(smaps_only, (size_t)n, sizeof(double), cmp);
    printf("maps=%zu breakdown wall_ms median=%.1f max=%.1f cpu_ms median=%.1f; smaps read+parse alone cpu_ms "
           "median=%.1f\n", maps, wall[n / 2], wall[n - 1], cpu[n / 2], smaps_only[n / 2]);
    return 0;
}
