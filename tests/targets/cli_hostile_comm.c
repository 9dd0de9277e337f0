/* cli_hostile_comm.c - a process and a thread that name themselves with
 * terminal escape sequences (prctl PR_SET_NAME, pthread_setname_np: 15
 * bytes each), for the tests that the cli shows such names escaped once,
 * in every format.
 *
 * The main thread is "hi\e[31mred"; a worker "th\e]0;X\a" allocates and
 * frees blocks it checks. Prints "ready"; on stdin "status" prints
 * "status rounds=N errors=E", "quit" prints "done ..." and exits 0 when E
 * is 0.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile unsigned long rounds, errors;
static volatile int stop;

static void *worker(void *arg)
{
    (void)arg;
    while (!stop) {
        unsigned char *b[64];
        for (int i = 0; i < 64; i++) {
            b[i] = malloc(100 + (size_t)i * 8);
            if (b[i])
                memset(b[i], i, 100 + (size_t)i * 8);
        }
        for (int i = 0; i < 64; i++) {
            if (!b[i] || b[i][99] != (unsigned char)i)
                errors++;
            free(b[i]);
        }
        rounds++;
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    prctl(PR_SET_NAME, "hi\x1b[31mred", 0, 0, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 2;
    pthread_setname_np(th, "th\x1b]0;X\x07");
    printf("ready\n");
    char line[64];
    while (fgets(line, sizeof(line), stdin)) {
        if (!strncmp(line, "status", 6))
            printf("status rounds=%lu errors=%lu\n", rounds, errors);
        else if (!strncmp(line, "quit", 4))
            break;
    }
    stop = 1;
    pthread_join(th, NULL);
    printf("done rounds=%lu errors=%lu\n", rounds, errors);
    return errors ? 1 : 0;
}
