/* fork_workload.c - what a fork costs a process that forks per request
 * (issue 28: a followed fork must be cheap). Prints "ready PID", then reads
 * lines "N exit", "N _exit" or "N busy" on stdin: N times fork(), the
 * child mallocs and frees a few blocks as a short-lived worker would and
 * ends with exit(0) or _exit(0) ("busy": allocates 4 MiB as a PostgreSQL
 * backend's start does, some kept to its end, so that a profiler samples
 * it about 8 times at its default rate and it leaves a last snapshot,
 * then exit(0)), the parent waits for it. Answers "forks N MODE
 * cpu_us=C wall_us=W minflt=F bad=B": C is the CPU time (user + system)
 * of the process (its threads, a profiler's agent included) and of the
 * children it reaped over the N forks, per fork; W the wall time per
 * fork; F the minor page faults of the same, per fork (a child's copies
 * of written pages, its first touches of code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double tv_us(struct timeval tv)
{
    return tv.tv_sec * 1e6 + tv.tv_usec;
}

static double cpu_us(double *minflt)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    *minflt = (double)self.ru_minflt + (double)kids.ru_minflt;
    return tv_us(self.ru_utime) + tv_us(self.ru_stime) + tv_us(kids.ru_utime) + tv_us(kids.ru_stime);
}

static double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A short-lived worker: a few allocations of a request's sizes. */
static int worker(void)
{
    static const size_t sizes[] = { 32, 200, 1024, 8192, 64, 4096, 100, 16384 };
    void *p[8];
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        p[i] = malloc(sizes[i]);
        if (!p[i])
            bad = 1;
        else
            memset(p[i], i, sizes[i]);
    }
    for (int i = 0; i < 8; i++)
        free(p[i]);
    return bad;
}

/* A backend's life in allocations: 4 MiB in blocks of 1-64 KiB, half of
 * them kept until the end (its caches). */
static int busy_worker(void)
{
    enum { N = 128 };
    void *keep[N];
    int bad = 0;
    for (int i = 0; i < N; i++) {
        size_t sz = 1024u << (i % 7); /* 1 KiB .. 64 KiB: 4 MiB in all */
        char *p = malloc(sz);
        if (!p) {
            bad = 1;
            keep[i] = NULL;
            continue;
        }
        memset(p, i, sz);
        if (i % 2) {
            free(p);
            p = NULL;
        }
        keep[i] = p;
    }
    for (int i = 0; i < N; i++)
        free(keep[i]);
    return bad | worker();
}

int main(void)
{
    char line[128];
    setvbuf(stdout, NULL, _IOLBF, 0);
    worker(); /* the parent's own allocations: the hooks have run */
    printf("ready %d\n", (int)getpid());
    while (fgets(line, sizeof(line), stdin)) {
        int n = atoi(line), use_exit = strstr(line, "_exit") == NULL, busy = strstr(line, "busy") != NULL,
            bad = 0;
        if (n <= 0)
            continue;
        double f0, f1, c0 = cpu_us(&f0), w0 = wall_us();
        for (int i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                int code = busy ? busy_worker() : worker();
                if (use_exit)
                    exit(code);
                _exit(code);
            }
            int st = -1;
            if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bad++;
        }
        double c1 = cpu_us(&f1), w1 = wall_us();
        printf("forks %d %s cpu_us=%.0f wall_us=%.0f minflt=%.1f bad=%d\n", n,
               busy ? "busy" : use_exit ? "exit" : "_exit",
               (c1 - c0) / n, (w1 - w0) / n, (f1 - f0) / n, bad);
    }
    return 0;
}
