/* rel_busy.c - a target caught in the middle of something awkward, for the
 * reliability tests that attach at that very moment.
 *
 *   rel_busy threads          threads start and exit all the time (8 live)
 *   rel_busy fork             forks in a loop; each child allocates, checks
 *                             and exits with 0 (any other status is an error)
 *   rel_busy alarm            SIGALRM every millisecond (setitimer), handled
 *                             while two threads allocate
 *   rel_busy dlopen LIB       dlopen(LIB) / call rel_dl_work / dlclose in a loop
 *                             while another thread allocates
 *   rel_busy realloc          a long realloc chain: one block grown a few
 *                             bytes at a time up to 24 MiB and shrunk back,
 *                             its contents checked at every step
 *
 * Every mode also runs the work in main's own loop, counts rounds and errors,
 * and reads commands on stdin: "status" prints "status rounds=N errors=E
 * extra=X" (X: children, signals, dlopen rounds...), "quit" stops, prints
 * "done rounds=N errors=E extra=X" and exits 0 when E is 0. "ready" once
 * the mode runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_ulong rounds, errors, extra;
static atomic_int stop;
static volatile sig_atomic_t alarms;
static const char *dl_path;

static void bad(const char *what)
{
    atomic_fetch_add(&errors, 1);
    fprintf(stderr, "rel_busy: %s\n", what);
}

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* A small allocation workload with its own check: 0 or -1. */
static int churn(uint64_t *rng, int n)
{
    void *p[32] = { 0 };
    size_t sz[32] = { 0 };
    int rc = 0;
    for (int k = 0; k < n; k++) {
        int i = (int)(next(rng) % 32);
        if (p[i]) {
            unsigned char *c = p[i];
            for (size_t j = 0; j < sz[i]; j++)
                if (c[j] != (unsigned char)(sz[i] + j))
                    rc = -1;
            free(p[i]);
        }
        sz[i] = next(rng) % 512 + 1;
        p[i] = malloc(sz[i]);
        if (!p[i])
            return -1;
        for (size_t j = 0; j < sz[i]; j++)
            ((unsigned char *)p[i])[j] = (unsigned char)(sz[i] + j);
    }
    for (int i = 0; i < 32; i++)
        free(p[i]);
    return rc;
}

static void *alloc_thread(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 7919 + 1;
    while (!atomic_load(&stop)) {
        if (churn(&rng, 200))
            bad("a thread's blocks lost their contents");
        atomic_fetch_add(&rounds, 1);
    }
    return NULL;
}

static void *short_thread(void *arg)
{
    uint64_t rng = (uintptr_t)arg + 3;
    if (churn(&rng, 50 + (int)(next(&rng) % 200)))
        bad("a short thread's blocks lost their contents");
    return NULL;
}

/* ---- modes: one step each --------------------------------------------- */

static void step_threads(void)
{
    static pthread_t th[8];
    static int live, made;
    if (live == 8) {
        pthread_join(th[made % 8], NULL);
        live--;
    }
    if (pthread_create(&th[made % 8], NULL, short_thread, (void *)(uintptr_t)made) == 0) {
        made++;
        live++;
        atomic_fetch_add(&extra, 1);
    } else {
        bad("pthread_create failed");
    }
}

static void step_fork(void)
{
    pid_t c = fork();
    if (c < 0) {
        bad("fork failed");
        return;
    }
    if (c == 0) {
        uint64_t rng = (uint64_t)getpid();
        _exit(churn(&rng, 500) ? 3 : 0);
    }
    int st;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char m[80];
        snprintf(m, sizeof(m), "child exited with status 0x%x", st);
        bad(m);
    }
    atomic_fetch_add(&extra, 1);
}

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void step_dlopen(void)
{
    void *h = dlopen(dl_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        bad(dlerror());
        return;
    }
    long (*work)(long) = (long (*)(long))dlsym(h, "rel_dl_work");
    if (!work || work(100) != 100 * 99 / 2)
        bad("rel_dl_work missing or wrong");
    if (dlclose(h))
        bad("dlclose failed");
    atomic_fetch_add(&extra, 1);
}

static void step_realloc(void)
{
    /* grow by 1..64 bytes per step up to 24 MiB (many moves, then mremap
     * once it is mmap'ed), then shrink back the same way */
    static uint64_t rng = 99;
    size_t cap = 24u << 20, n = 0;
    unsigned char *p = NULL;
    while (n < cap && !atomic_load(&stop)) {
        size_t nn = n + 1 + next(&rng) % (n < 65536 ? 64 : 65536);
        unsigned char *q = realloc(p, nn);
        if (!q) {
            bad("realloc failed");
            break;
        }
        /* byte 0 holds the marker 0xab, byte i > 0 holds (unsigned char)i */
        if (n && (q[0] != 0xab || (n > 1 && q[n - 1] != (unsigned char)(n - 1)) ||
                  (n > 2 && q[n / 2] != (unsigned char)(n / 2))))
            bad("realloc chain lost the contents");
        for (size_t i = n; i < nn; i++)
            q[i] = (unsigned char)i;
        q[0] = 0xab;
        p = q;
        n = nn;
    }
    while (n > 1 && !atomic_load(&stop)) {
        size_t nn = n - 1 - next(&rng) % (n < 65536 ? (n > 64 ? 64 : n - 1) : 65536);
        if (nn < 1)
            nn = 1;
        unsigned char *q = realloc(p, nn);
        if (!q) {
            bad("realloc (shrink) failed");
            break;
        }
        if (q[0] != 0xab || (nn > 2 && q[nn - 1] != (unsigned char)(nn - 1)))
            bad("realloc chain lost the contents while shrinking");
        p = q;
        n = nn;
    }
    free(p);
    atomic_fetch_add(&extra, 1);
}

static void *mode_loop(void *arg)
{
    void (*step)(void) = (void (*)(void))arg;
    while (!atomic_load(&stop)) {
        step();
        atomic_fetch_add(&rounds, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    void (*step)(void) = NULL;
    int helpers = 1;
    const char *mode = argc > 1 ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "threads")) {
        step = step_threads;
    } else if (!strcmp(mode, "fork")) {
        step = step_fork;
    } else if (!strcmp(mode, "alarm")) {
        struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        helpers = 2;
    } else if (!strcmp(mode, "dlopen") && argc > 2) {
        dl_path = argv[2];
        step = step_dlopen;
    } else if (!strcmp(mode, "realloc")) {
        step = step_realloc;
        helpers = 0;
    } else {
        fprintf(stderr, "usage: rel_busy threads|fork|alarm|dlopen LIB|realloc\n");
        return 2;
    }
    pthread_t th[3];
    int nth = 0;
    for (int i = 0; i < helpers; i++)
        if (pthread_create(&th[nth], NULL, alloc_thread, (void *)(uintptr_t)(i + 1)) == 0)
            nth++;
    if (step && pthread_create(&th[nth], NULL, mode_loop, (void *)step) == 0)
        nth++;
    printf("ready\n");

    /* main: its own allocations between polls of stdin */
    uint64_t rng = 5;
    char line[64];
    for (;;) {
        struct pollfd pfd = { 0, POLLIN, 0 };
        if (poll(&pfd, 1, 1) > 0) {
            if (!fgets(line, sizeof(line), stdin))
                break;
            if (!strncmp(line, "quit", 4))
                break;
            if (!strncmp(line, "status", 6))
                printf("status rounds=%lu errors=%lu extra=%lu\n", atomic_load(&rounds),
                       atomic_load(&errors), !strcmp(mode, "alarm") ? (unsigned long)alarms : atomic_load(&extra));
        }
        if (churn(&rng, 20))
            bad("main's blocks lost their contents");
    }
    atomic_store(&stop, 1);
    if (!strcmp(mode, "alarm")) {
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        atomic_store(&extra, (unsigned long)alarms);
    }
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    printf("done rounds=%lu errors=%lu extra=%lu\n", atomic_load(&rounds), atomic_load(&errors),
           atomic_load(&extra));
    fflush(stdout);
    return atomic_load(&errors) ? 1 : 0;
}
