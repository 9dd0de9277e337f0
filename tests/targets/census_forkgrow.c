/* census_forkgrow - a fork child whose brk heap grew after the fork, like
 * every PostgreSQL backend and pre-fork worker: the kernel then shows
 * [heap] as two mappings (the part inherited, the part grown: different
 * anon_vma), both labelled [heap].
 *
 * The parent holds 2,000 blocks of 100 bytes, forks and waits. The child
 * holds 30,000 blocks of 424 bytes from a global array and drops 20,000
 * blocks of 760 bytes (interleaved, so nothing coalesces), prints
 * "child PID" and "ready"; on SIGUSR1 it checks every held block
 * ("verify ok" or "verify BAD"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARENT_N 2000
#define HELD_N 30000
#define HELD_SIZE 424
#define LEAK_N 20000
#define LEAK_SIZE 760

static char *g_parent[PARENT_N];
static char *g_held[HELD_N];
static volatile sig_atomic_t want_verify;

static void on_usr1(int sig)
{
    (void)sig;
    want_verify = 1;
}

static int verify(void)
{
    for (int i = 0; i < HELD_N; i++)
        for (int k = 0; k < HELD_SIZE; k++)
            if (g_held[i][k] != (char)('a' + i % 7))
                return -1;
    for (int i = 0; i < PARENT_N; i++)
        for (int k = 0; k < 100; k++)
            if (g_parent[i][k] != 'P')
                return -1;
    return 0;
}

static void child(void)
{
    for (int i = 0; i < HELD_N; i++) {
        g_held[i] = malloc(HELD_SIZE);
        memset(g_held[i], 'a' + i % 7, HELD_SIZE);
        if (i < LEAK_N)
            memset(malloc(LEAK_SIZE), 'X', LEAK_SIZE);
    }
    printf("child %d held=%d x %d leaked=%d x %d\nready\n", (int)getpid(), HELD_N, HELD_SIZE, LEAK_N, LEAK_SIZE);
    fflush(stdout);
    for (;;) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (want_verify) {
            printf("verify %s\n", verify() == 0 ? "ok" : "BAD");
            fflush(stdout);
            want_verify = 0;
        }
    }
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < PARENT_N; i++)
        g_parent[i] = memset(malloc(100), 'P', 100);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0)
        child();
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    return 0;
}
