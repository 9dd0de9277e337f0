/* maps_workload - a process with many mappings and a 1 ms sleeper, for the
 * cost of reading its memory breakdown (smaps + the allocator's figures).
 * --maps N (default 10000) one-page mappings that cannot merge (alternate
 * protections), each touched; a thread that sleeps 1 ms in a loop and
 * prints "lat max_us=X p99_us=Y n=Z" every 250 ms: how late its wakeups
 * were in that window. Prints "ready" when set up. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *sleeper(void *arg)
{
    (void)arg;
    static double late[1024];
    size_t n = 0;
    double window = now_us();
    for (;;) {
        double t0 = now_us();
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
        double l = now_us() - t0 - 1000.0;
        if (n < 1024)
            late[n++] = l;
        if (now_us() - window >= 250000.0) {
            qsort(late, n, sizeof(late[0]), cmp);
            printf("lat max_us=%.0f p99_us=%.0f n=%zu\n", late[n - 1], late[(n * 99) / 100], n);
            fflush(stdout);
            n = 0;
            window = now_us();
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long maps = 10000;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--maps"))
            maps = strtol(argv[i + 1], NULL, 10);
    long page = sysconf(_SC_PAGESIZE);
    char *base = mmap(NULL, (size_t)(maps * 2 * page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 1;
    /* Every other page readable and written: N separate VMAs. */
    for (long i = 0; i < maps; i++) {
        char *p = base + i * 2 * page;
        if (mprotect(p, (size_t)page, PROT_READ | PROT_WRITE) != 0)
            return 1;
        p[0] = 1;
    }
    void *keep = malloc(64 << 20);
    memset(keep, 1, 64 << 20);
    pthread_t th;
    pthread_create(&th, NULL, sleeper, NULL);
    printf("ready maps=%ld\n", maps);
    fflush(stdout);
    pause();
    return 0;
}
