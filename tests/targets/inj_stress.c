/* inj_stress.c - 32 threads (main included) allocating at full speed while
 * heapinject injects into the process again and again. Every block is
 * filled with a pattern derived from its owner and sequence number and
 * checked before it is freed; a heap corrupted by an injection, a lost
 * register or a deadlock shows up as a mismatch, a crash or a hang.
 *
 *   inj_stress STOPFILE [MAXSECS]
 * Runs until STOPFILE exists (or MAXSECS, default 120), then prints
 * "stress threads=32 ops=N errors=E" and exits 0 if E == 0. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 32
#define SLOTS 64

static atomic_int stop;
static atomic_long total_ops, total_errors;

struct block {
    unsigned char *p;
    size_t size;
    unsigned char seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t pick_size(uint64_t *s)
{
    uint64_t r = rnd(s);

    /* Mostly small (tcache, fastbins), some medium, a few mmap-sized. */
    if ((r & 255) == 0)
        return 128 * 1024 + (r >> 8) % (256 * 1024);
    if ((r & 15) == 0)
        return 1024 + (r >> 8) % 16384;
    return 1 + (r >> 8) % 512;
}

static long churn(struct block *b, uint64_t *s, long n)
{
    long errors = 0;

    for (long k = 0; k < n; k++) {
        struct block *x = &b[rnd(s) % SLOTS];

        if (x->p) {
            for (size_t i = 0; i < x->size; i += 61)
                if (x->p[i] != (unsigned char)(x->seed + i))
                    errors++;
            if (x->size < 65536 && (rnd(s) & 3) == 0) {
                unsigned char *np = realloc(x->p, x->size * 2);

                if (np) {
                    x->p = np;
                    for (size_t i = x->size; i < x->size * 2; i++)
                        x->p[i] = (unsigned char)(x->seed + i);
                    x->size *= 2;
                    continue;
                }
            }
            free(x->p);
            x->p = NULL;
        } else {
            x->size = pick_size(s);
            x->seed = (unsigned char)rnd(s);
            x->p = (rnd(s) & 7) ? malloc(x->size) : calloc(1, x->size);
            if (!x->p)
                continue;
            for (size_t i = 0; i < x->size; i++)
                x->p[i] = (unsigned char)(x->seed + i);
        }
    }
    return errors;
}

static void finish(struct block *b, long ops, long errors)
{
    for (int i = 0; i < SLOTS; i++)
        free(b[i].p);
    atomic_fetch_add(&total_ops, ops);
    atomic_fetch_add(&total_errors, errors);
}

static void *worker(void *arg)
{
    struct block b[SLOTS] = { 0 };
    uint64_t s = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
    long ops = 0, errors = 0;

    while (!atomic_load(&stop)) {
        errors += churn(b, &s, 1000);
        ops += 1000;
    }
    finish(b, ops, errors);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NTHREADS];
    struct block b[SLOTS] = { 0 };
    uint64_t s = 12345;
    long ops = 0, errors = 0;
    time_t t0 = time(NULL);
    /* MAXSECS only guards against a target orphaned by a test that died
     * without its cleanup; the test's own stop file ends a normal run,
     * however long a loaded machine makes it. */
    int maxsecs = argc > 2 ? atoi(argv[2]) : 120;
    pid_t parent = getppid();

    if (argc < 2) {
        fprintf(stderr, "usage: inj_stress STOPFILE [MAXSECS]\n");
        return 2;
    }
    for (long i = 1; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    printf("ready\n");
    fflush(stdout);
    /* The main thread allocates too, so the injector often finds it inside
     * malloc and has to retry or pick another thread. */
    while (access(argv[1], F_OK) != 0 && time(NULL) - t0 < maxsecs && getppid() == parent) {
        errors += churn(b, &s, 2000);
        ops += 2000;
    }
    atomic_store(&stop, 1);
    for (int i = 1; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    finish(b, ops, errors);
    printf("stress threads=%d ops=%ld errors=%ld\n", NTHREADS, atomic_load(&total_ops),
           atomic_load(&total_errors));
    return atomic_load(&total_errors) ? 1 : 0;
}
