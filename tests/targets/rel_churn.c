/* rel_churn.c - a target that allocates and frees at full speed on many
 * threads and checks its own data, for the reliability tests.
 *
 *   rel_churn [THREADS]      (default 16)
 *
 * Every worker keeps SLOTS blocks of random sizes (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc), each filled with a pattern derived from a
 * seed stored in its header; a block is verified before it is freed or
 * resized. A shared table of RECORDS records, each with its own checksum,
 * is rewritten under a lock now and then. Commands on stdin:
 *
 *   check   every worker verifies all its live blocks, main verifies the
 *           table; prints "check N ok ops=OPS errors=E" (E counts every
 *           mismatch since start)
 *   quit    stops the workers, frees everything (verifying it), prints
 *           "done ops=OPS errors=E", exits 0 when E is 0, else 1
 *
 * Prints "ready" when all workers run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 512
#define RECORDS 4096
#define RECORD_WORDS 14

struct block {
    uint64_t seed;
    size_t size;   /* payload bytes after the header */
};

struct record {
    uint64_t words[RECORD_WORDS];
    uint64_t sum;
};

static atomic_ulong ops, errors;
static atomic_int stop, check_gen, acked;
static int nthreads = 16;
static struct record *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void fill(struct block *b)
{
    uint64_t s = b->seed | 1;
    unsigned char *p = (unsigned char *)(b + 1);
    for (size_t i = 0; i < b->size; i++)
        p[i] = (unsigned char)(next(&s) >> 24);
}

/* 0 if the block still holds its pattern. */
static int verify(const struct block *b)
{
    uint64_t s = b->seed | 1;
    const unsigned char *p = (const unsigned char *)(b + 1);
    for (size_t i = 0; i < b->size; i++)
        if (p[i] != (unsigned char)(next(&s) >> 24))
            return -1;
    return 0;
}

static void bad(const char *what)
{
    atomic_fetch_add(&errors, 1);
    fprintf(stderr, "rel_churn: %s\n", what);
}

static size_t pick_size(uint64_t *rng)
{
    uint64_t r = next(rng);
    switch (r % 16) {
    case 0: return 0;
    case 1: return 4096 + r % 60000;   /* a few large ones (still below mmap threshold) */
    default: return r % 600;
    }
}

static struct block *make(uint64_t *rng, size_t size)
{
    struct block *b = NULL;
    size_t total = sizeof(*b) + size;
    switch (next(rng) % 5) {
    case 0: b = calloc(1, total); break;
    case 1: if (posix_memalign((void **)&b, 64, total)) b = NULL; break;
    case 2: b = aligned_alloc(32, (total + 31) & ~(size_t)31); break;
    default: b = malloc(total); break;
    }
    if (!b) {
        bad("allocation failed");
        return NULL;
    }
    b->seed = next(rng);
    b->size = size;
    fill(b);
    return b;
}

static uint64_t record_sum(const struct record *r)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < RECORD_WORDS; i++)
        s = (s ^ r->words[i]) * 0x100000001b3ull;
    return s;
}

static void *worker(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 12345;
    struct block **slot = calloc(SLOTS, sizeof(*slot));
    int seen_gen = 0;
    if (!slot) {
        bad("no slot array");
        return NULL;
    }
    while (!atomic_load(&stop)) {
        for (int k = 0; k < 64; k++) {
            int i = (int)(next(&rng) % SLOTS);
            struct block *b = slot[i];
            if (b && verify(b))
                bad("a block lost its pattern");
            uint64_t what = next(&rng) % 8;
            if (b && what == 0) {
                /* grow or shrink in place or moved: the prefix must survive */
                size_t ns = pick_size(&rng);
                struct block *nb = realloc(b, sizeof(*b) + ns);
                if (!nb) {
                    bad("realloc failed");
                    continue;
                }
                size_t keep = nb->size < ns ? nb->size : ns;
                nb->size = keep;
                if (verify(nb))
                    bad("realloc lost the data");
                nb->seed = next(&rng);
                nb->size = ns;
                fill(nb);
                slot[i] = nb;
            } else {
                free(b);
                slot[i] = make(&rng, pick_size(&rng));
            }
            atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
        }
        if ((next(&rng) & 63) == 0) {
            pthread_mutex_lock(&table_lock);
            struct record *r = &table[next(&rng) % RECORDS];
            if (r->sum != record_sum(r))
                bad("a table record lost its checksum");
            for (int w = 0; w < RECORD_WORDS; w++)
                r->words[w] = next(&rng);
            r->sum = record_sum(r);
            pthread_mutex_unlock(&table_lock);
        }
        int g = atomic_load(&check_gen);
        if (g != seen_gen) {
            for (int i = 0; i < SLOTS; i++)
                if (slot[i] && verify(slot[i]))
                    bad("check: a block lost its pattern");
            seen_gen = g;
            atomic_fetch_add(&acked, 1);
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        if (slot[i] && verify(slot[i]))
            bad("quit: a block lost its pattern");
        free(slot[i]);
    }
    free(slot);
    return NULL;
}

static void check_table(void)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < RECORDS; i++)
        if (table[i].sum != record_sum(&table[i]))
            bad("check: a table record lost its checksum");
    pthread_mutex_unlock(&table_lock);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (nthreads < 1 || nthreads > 256)
        nthreads = 16;
    setvbuf(stdout, NULL, _IOLBF, 0);
    table = malloc(RECORDS * sizeof(*table));
    if (!table)
        return 2;
    uint64_t rng = 42;
    for (int i = 0; i < RECORDS; i++) {
        for (int w = 0; w < RECORD_WORDS; w++)
            table[i].words[w] = next(&rng);
        table[i].sum = record_sum(&table[i]);
    }
    pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1))) {
            perror("pthread_create");
            return 2;
        }
    printf("ready\n");

    char line[64];
    int checks = 0;
    while (fgets(line, sizeof(line), stdin)) {
        if (!strncmp(line, "check", 5)) {
            int want = atomic_load(&acked) + nthreads;
            atomic_fetch_add(&check_gen, 1);
            checks++;
            struct timespec ts = { 0, 2000000 };
            for (int i = 0; i < 30000 && atomic_load(&acked) < want; i++)
                nanosleep(&ts, NULL);
            if (atomic_load(&acked) < want)
                bad("check: a worker did not answer within 60 s");
            check_table();
            printf("check %d ok ops=%lu errors=%lu\n", checks, atomic_load(&ops), atomic_load(&errors));
        } else if (!strncmp(line, "quit", 4)) {
            break;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    check_table();
    free(th);
    free(table);
    printf("done ops=%lu errors=%lu\n", atomic_load(&ops), atomic_load(&errors));
    return atomic_load(&errors) ? 1 : 0;
}
