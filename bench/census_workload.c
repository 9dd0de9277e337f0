/* census_workload - a heap of known size for the census benchmark, and a
 * 1 ms sleeper. --mib N (default 1024) of 4,096-byte blocks on a list held
 * by a global (every other one leaked), each written; a thread that sleeps
 * 1 ms in a loop and prints "lat max_us=X p99_us=Y n=Z" every 250 ms (how
 * late its wakeups were: the census's stall shows there). --threads N more
 * threads block on a condition variable for good (the census holds every
 * thread for its registers). --pointers: every word of a block's fill is
 * an address inside a held block made before it, as an object graph is
 * (the scan then looks up every word it reads, not one a block; the
 * leaked blocks stay the same). "ready" when set up. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

struct node {
    struct node *next;
    char fill[4096 - sizeof(struct node *)];
};

struct node *g_list;

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

static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *blocked(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&never_lock);
    for (;;)
        pthread_cond_wait(&never, &never_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    long mib = 1024, idle = 0;
    int pointers = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--pointers"))
            pointers = 1;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--mib"))
            mib = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--threads"))
            idle = strtol(argv[i + 1], NULL, 10);
    long blocks = mib * 256, nheld = 0;
    /* the held blocks so far, for --pointers (mapped: no block of the heap) */
    struct node **held = mmap(NULL, (size_t)(blocks / 2 + 1) * sizeof(*held), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (held == MAP_FAILED)
        return 1;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (long i = 0; i < blocks; i++) {
        struct node *x = malloc(sizeof(*x));
        if (!x)
            return 1;
        memset(x->fill, 'w', sizeof(x->fill));
        if (pointers && nheld) {
            uintptr_t *w = (uintptr_t *)x->fill;
            for (size_t k = 0; k < sizeof(x->fill) / sizeof(*w); k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                struct node *to = held[(seed >> 33) % (uint64_t)nheld];
                w[k] = (uintptr_t)to + ((seed >> 20) & 4088u);
            }
        }
        x->next = NULL;
        if (i % 2 == 0) { /* held; the odd ones leaked */
            x->next = g_list;
            g_list = x;
            held[nheld++] = x;
        }
    }
    munmap(held, (size_t)(blocks / 2 + 1) * sizeof(*held));
    pthread_t th;
    pthread_create(&th, NULL, sleeper, NULL);
    pthread_attr_t small;
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 64 << 10);
    for (long i = 0; i < idle; i++)
        if (pthread_create(&th, &small, blocked, NULL))
            return 1;
    printf("ready blocks=%ld\n", blocks);
    fflush(stdout);
    pause();
    return 0;
}
