/* inj_unsafe.c - a target whose only thread sits where dlopen must not be
 * called, for tests/e2e/inject_safepoint.sh.
 *
 *   inj_unsafe realloc SECS   for SECS seconds reallocs a 16 MiB block that
 *                             cannot grow in place, over and over: almost
 *                             all the time inside realloc, copying while it
 *                             holds the arena's lock (a dlopen there
 *                             deadlocks on that lock); prints "ready" at the
 *                             start, then "calm" and sleeps
 *   inj_unsafe ctor LIB       dlopen(LIB), whose constructor blocks (inside
 *                             the dynamic linker, holding the loader's lock)
 *                             until the test lets it go; prints "loaded"
 *                             after dlopen returns, then sleeps
 * The main thread is the only thread. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_forever(void)
{
    for (;;) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
}

__attribute__((noinline)) static void realloc_spin(double secs)
{
    /* Blocks below the mmap threshold stay in the heap, and a freed top is
     * never trimmed: each round is the same realloc copying 16 MiB. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    double end = now() + secs;
    unsigned long rounds = 0;

    printf("ready\n");
    fflush(stdout);
    while (now() < end) {
        char *p = malloc(16 << 20);
        void *guard = malloc(32); /* right after p: p cannot grow in place */
        if (!p || !guard)
            abort();
        p[0] = 1;
        p = realloc(p, 24 << 20); /* a new block, 16 MiB copied, lock held */
        sink = p;
        free(guard);
        free(p);
        rounds++;
    }
    printf("calm after %lu rounds\n", rounds);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 2 && !strcmp(argv[1], "realloc")) {
        realloc_spin(atof(argv[2]));
        sleep_forever();
    }
    if (argc > 2 && !strcmp(argv[1], "ctor")) {
        if (!dlopen(argv[2], RTLD_NOW)) {
            printf("dlopen: %s\n", dlerror());
            return 1;
        }
        printf("loaded\n");
        sleep_forever();
    }
    fprintf(stderr, "usage: inj_unsafe realloc SECS | ctor LIB\n");
    return 2;
}
