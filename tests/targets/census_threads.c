/* census_threads - many idle threads on small stacks (census_threads.sh,
 * issue 25 item 9b: a census of more threads than it holds).
 *
 * census_threads N   N threads (16 KiB stacks) wait on one condition
 *                    variable; the main thread holds 1,000 checked blocks.
 *                    Prints "ready N threads"; on SIGUSR1 checks every
 *                    block and that every thread still waits, and prints
 *                    "verify ok" or "verify BAD ...". */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCKS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static atomic_int waiting, woke;
static volatile sig_atomic_t g_verify;

static void *idle(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    atomic_fetch_add(&waiting, 1);
    for (;;) {
        pthread_cond_wait(&cond, &lock); /* never signalled: a wake-up is spurious */
        atomic_fetch_add(&woke, 1);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    g_verify = 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int n = argc > 1 ? atoi(argv[1]) : 10001;
    uint64_t *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(64);
        for (int w = 0; w < 8; w++)
            blocks[i][w] = (uint64_t)i * 8 + (uint64_t)w;
    }
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 16 << 10);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, idle, NULL)) {
            printf("create failed at %d\n", i);
            return 1;
        }
    }
    while (atomic_load(&waiting) < n)
        usleep(1000);
    signal(SIGUSR1, on_usr1);
    printf("ready %d threads\n", n);
    for (;;) {
        pause();
        if (!g_verify)
            continue;
        g_verify = 0;
        int bad = 0;
        for (int i = 0; i < BLOCKS; i++)
            for (int w = 0; w < 8; w++)
                bad += blocks[i][w] != (uint64_t)i * 8 + (uint64_t)w;
        pthread_mutex_lock(&lock);
        int w = atomic_load(&waiting);
        pthread_mutex_unlock(&lock);
        if (bad || w != n)
            printf("verify BAD %d words, %d of %d threads waiting\n", bad, w, n);
        else
            printf("verify ok (%d threads waiting, %d spurious wake-ups)\n", w, atomic_load(&woke));
    }
}
