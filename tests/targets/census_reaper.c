/* census_reaper.c - a supervisor that reaps every child it has, for
 * tests/e2e/census_copy.sh: a census's copy must never be one of them.
 * One thread loops on waitpid(-1, __WALL | WNOHANG), another waits in
 * waitid(P_ALL, WEXITED | __WALL); both count a reaped pid that is not the
 * child it made itself (a sleeper that lives on, so that waitid blocks).
 * Holds a list of blocks (NBLOCKS, 3,000 unless told; a large one makes a
 * census walk long) whose contents it checks.
 *
 *   census_reaper [plain|subreaper] [NBLOCKS]
 *                    subreaper: PR_SET_CHILD_SUBREAPER first
 * Prints "ready";
 * "status" on stdin prints "status strays=N own_alive=0|1 data=ok|BAD"
 * and names each stray on a "stray PID COMM" line when reaped. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t own;
static atomic_ulong strays;
static atomic_int own_alive = 1;

struct node {
    struct node *next;
    unsigned id, check;
};
static struct node *list;

static void reaped(pid_t pid, const char *how)
{
    if (pid == own) {
        atomic_store(&own_alive, 0);
        return;
    }
    atomic_fetch_add(&strays, 1);
    printf("stray %d reaped by %s\n", (int)pid, how);
}

static void *by_waitid(void *arg)
{
    (void)arg;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | __WALL) == 0 && si.si_pid > 0)
            reaped(si.si_pid, "waitid(P_ALL, __WALL)");
        else if (errno == ECHILD)
            usleep(1000);
    }
    return NULL;
}

static void *by_waitpid(void *arg)
{
    (void)arg;
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, __WALL | WNOHANG);
        if (p > 0)
            reaped(p, "waitpid(-1, __WALL)");
        else
            usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "subreaper"))
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    unsigned nblocks = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 3000;
    for (unsigned i = 0; i < nblocks; i++) {
        struct node *n = malloc(sizeof(*n));
        n->id = i;
        n->check = i ^ 0x5a5a5a5au;
        n->next = list;
        list = n;
    }
    own = fork();
    if (own == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    pthread_t a, b;
    pthread_create(&a, NULL, by_waitid, NULL);
    pthread_create(&b, NULL, by_waitpid, NULL);
    printf("ready own=%d\n", (int)own);
    char line[64];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "status", 6)) {
            unsigned seen = 0, ok = 1;
            for (struct node *n = list; n; n = n->next, seen++)
                ok &= n->check == (n->id ^ 0x5a5a5a5au);
            printf("status strays=%lu own_alive=%d data=%s\n", atomic_load(&strays), atomic_load(&own_alive),
                   ok && seen == nblocks ? "ok" : "BAD");
        }
    kill(own, SIGKILL);
    return 0;
}
