/* pl_threads.c - 16 threads allocating at once.
 *   spawn   starts 16 threads named worker-NN; they wait
 *   work    each thread runs thread_work: keeps 1000 x 128 B, churns
 *           1000 x 64 B; prints "done work" when all finished
 *   exit    the threads end (joined); their counters fold into "(exited)"
 */
#include <pthread.h>

#include "pl_common.h"

#define NTHREADS 16

static pthread_t threads[NTHREADS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 1 = work, 2 = exit */
static int finished;
static void *kept[NTHREADS][1000];

__attribute__((noinline)) void thread_work(int id)
{
    for (int i = 0; i < 1000; i++) {
        kept[id][i] = malloc(128);
        void *p = malloc(64);
        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

static void wait_phase(int want)
{
    pthread_mutex_lock(&mu);
    while (phase < want)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char name[16];
    snprintf(name, sizeof(name), "worker-%02d", id);
    pthread_setname_np(pthread_self(), name);
    wait_phase(1);
    thread_work(id);
    pthread_mutex_lock(&mu);
    finished++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    wait_phase(2);
    return NULL;
}

static void set_phase(int p)
{
    pthread_mutex_lock(&mu);
    phase = p;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static int handle(const char *cmd, const char *arg)
{
    (void)arg;
    if (strcmp(cmd, "spawn") == 0) {
        for (long i = 0; i < NTHREADS; i++)
            pthread_create(&threads[i], NULL, worker, (void *)i);
        pl_say("done spawn");
    } else if (strcmp(cmd, "work") == 0) {
        set_phase(1);
        pthread_mutex_lock(&mu);
        while (finished < NTHREADS)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        pl_say("truth thread_work alloc_objs=%d alloc_bytes=%d live_objs=%d live_bytes=%d", NTHREADS * 2000,
               NTHREADS * 1000 * (128 + 64), NTHREADS * 1000, NTHREADS * 128000);
        pl_say("done work");
    } else if (strcmp(cmd, "exit") == 0) {
        set_phase(2);
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(threads[i], NULL);
        pl_say("done exit");
    } else if (strcmp(cmd, "free") == 0) {
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < 1000; i++)
                free(kept[t][i]);
        pl_say("done free");
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
