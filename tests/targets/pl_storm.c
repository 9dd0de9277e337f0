/* pl_storm.c - allocation storm for attach/detach under load.
 *   storm    4 threads allocate, fill, check and free blocks of random sizes
 *            through every entry point; one more thread dlopens and
 *            dlcloses libz (which has malloc slots) in a loop, calling
 *            into it, so modules come and go while the agent patches.
 *   calm     stops them; prints "done calm corrupt=N loops=L" (N must be 0)
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>

#include "pl_common.h"

#define NTHREADS 4

static volatile int storming;
static pthread_t th[NTHREADS + 1];
static long corrupt, loops, dl_loops;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *alloc_some(uint64_t *s, size_t *n)
{
    *n = (size_t)(rnd(s) % 5000) + 1;
    void *p = NULL;
    switch (rnd(s) % 6) {
    case 0: p = malloc(*n); break;
    case 1: p = calloc(1, *n); break;
    case 2: p = realloc(NULL, *n); break;
    case 3: if (posix_memalign(&p, 64, *n)) p = NULL; break;
    case 4: p = aligned_alloc(32, (*n + 31) & ~(size_t)31); break;
    default: p = memalign(128, *n); break;
    }
    return p;
}

static void *storm(void *arg)
{
    uint64_t s = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1);
    void *blk[64] = { 0 };
    size_t len[64] = { 0 };
    long bad = 0, n = 0;
    while (storming) {
        unsigned i = (unsigned)(rnd(&s) % 64);
        if (blk[i]) {
            unsigned char *c = blk[i];
            for (size_t k = 0; k < len[i]; k += 97)
                if (c[k] != (unsigned char)(i + k))
                    bad++;
            if (rnd(&s) % 4 == 0) {
                size_t nn = (size_t)(rnd(&s) % 8000) + 1;
                unsigned char *q = realloc(blk[i], nn);
                if (q) {
                    for (size_t k = 0; k < nn; k += 97)
                        q[k] = (unsigned char)(i + k);
                    blk[i] = q;
                    len[i] = nn;
                }
                continue;
            }
            free(blk[i]);
            blk[i] = NULL;
        } else {
            unsigned char *c = alloc_some(&s, &len[i]);
            if (!c)
                continue;
            for (size_t k = 0; k < len[i]; k += 97)
                c[k] = (unsigned char)(i + k);
            blk[i] = c;
        }
        n++;
    }
    for (int i = 0; i < 64; i++)
        free(blk[i]);
    pthread_mutex_lock(&mu);
    corrupt += bad;
    loops += n;
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *dl_storm(void *arg)
{
    (void)arg;
    while (storming) {
        void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
            continue;
        /* deflateInit/deflateEnd allocate through libz's own slots */
        int (*init)(void *, int, const char *, int) = (int (*)(void *, int, const char *, int))dlsym(h, "deflateInit_");
        int (*end)(void *) = (int (*)(void *))dlsym(h, "deflateEnd");
        if (init && end) {
            char strm[112] = { 0 }; /* sizeof(z_stream) on x86-64 */
            if (init(strm, 6, "1.2.13", (int)sizeof(strm)) == 0)
                end(strm);
        }
        dlclose(h);
        dl_loops++;
    }
    return NULL;
}

static int handle(const char *cmd, const char *arg)
{
    (void)arg;
    if (strcmp(cmd, "storm") == 0) {
        storming = 1;
        for (long i = 0; i < NTHREADS; i++)
            pthread_create(&th[i], NULL, storm, (void *)i);
        pthread_create(&th[NTHREADS], NULL, dl_storm, NULL);
        pl_say("done storm");
    } else if (strcmp(cmd, "calm") == 0) {
        storming = 0;
        for (int i = 0; i <= NTHREADS; i++)
            pthread_join(th[i], NULL);
        pl_say("done calm corrupt=%ld loops=%ld dl_loops=%ld", corrupt, loops, dl_loops);
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
