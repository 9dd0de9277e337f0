/* svc_prefork: a pre-fork server whose one worker leaks. The master forks
 * NWORKERS workers (argv[1], default 3) and sits idle; every worker serves
 * "requests" (svc_serve_request: blocks allocated, filled, checked and
 * freed); worker number LEAKER (argv[2], default 1) also keeps 16 KiB of
 * each request (svc_leak_request), up to 64 MiB. Prints "worker PID" per
 * worker, "leaker PID" and "ready" when all are serving. On SIGTERM each
 * worker checks every block it holds and prints "worker PID ok" (or
 * "BAD ..."); the master waits for them and prints "master ok" when all
 * exited 0. The workers die with the master (PR_SET_PDEATHSIG). On
 * SIGUSR1 the master forks one more worker (a worker recycled, a new
 * connection's backend), which leaks through svc_leak_late_request and
 * prints "late PID" once it serves; its first allocation past the fork is
 * a leak of 1 MiB (svc_leak_at_birth), kept and checked to the end: a
 * profiler that starts with the worker sees it, one attached later not. On
 * SIGUSR2 the master forks a brief child (svc_brief_child: 1 MiB kept,
 * then exit(0) at once), waits for it and prints "brief PID ok" (or
 * "brief PID bad"). With "exit" as argv[3] a worker ends
 * with exit(0), as nginx's and most servers' do (its atexit handlers run),
 * and the leaker prints "leaked N" every 256 leaks. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXWORKERS 16
#define NLIVE 256
#define BLOCK 2048
#define LEAK_BLOCK 16384
#define MAX_LEAKS 4096 /* 64 MiB */

static volatile sig_atomic_t stopping, fork_one, fork_brief;

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

static void on_usr1(int sig)
{
    (void)sig;
    fork_one = 1;
}

static void on_usr2(int sig)
{
    (void)sig;
    fork_brief = 1;
}

/* A child that lives a moment (a connection's backend under pgbench -C):
 * 1 MiB kept, written, checked, then exit(0), long before the next look
 * at the tree. */
__attribute__((noinline)) static void svc_brief_child(void)
{
    unsigned char *b = malloc(1 << 20);
    if (!b)
        _exit(2);
    memset(b, 0x5b, 1 << 20);
    for (size_t i = 0; i < (1 << 20); i += 4096)
        if (b[i] != 0x5b)
            _exit(1);
    exit(0);
}

static void say(const char *fmt, int a)
{
    char line[96];
    int n = snprintf(line, sizeof(line), fmt, a);
    if (write(STDOUT_FILENO, line, (size_t)n) != n)
        _exit(3);
}

static void check(const unsigned char *b, size_t len, unsigned char tag)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != tag) {
            say("BAD pid %d\n", (int)getpid());
            _exit(1);
        }
}

static unsigned char *live[NLIVE];
static unsigned char live_tag[NLIVE];
static unsigned char *leaks[MAX_LEAKS];
static size_t nleaks;
static int use_exit; /* argv[3] "exit" */

__attribute__((noinline)) static void svc_serve_request(unsigned round)
{
    size_t i = round % NLIVE;
    if (live[i]) {
        check(live[i], BLOCK, live_tag[i]);
        free(live[i]);
    }
    if (!(live[i] = malloc(BLOCK)))
        _exit(2);
    live_tag[i] = (unsigned char)(round * 7 + 1);
    memset(live[i], live_tag[i], BLOCK);
}

__attribute__((noinline)) static void svc_leak_request(void)
{
    if (nleaks == MAX_LEAKS)
        return;
    unsigned char *b = malloc(LEAK_BLOCK);
    if (!b)
        _exit(2);
    memset(b, (unsigned char)(nleaks & 0xff), LEAK_BLOCK);
    leaks[nleaks++] = b;
    if (use_exit && nleaks % 256 == 0)
        say("leaked %d\n", (int)nleaks);
}

__attribute__((noinline)) static void svc_leak_late_request(void)
{
    svc_leak_request();
}

#define BIRTH_BLOCK (1u << 20)
static unsigned char *birth;

/* Allocates before anything else in a late worker (no stdio, no prctl). */
__attribute__((noinline)) static void svc_leak_at_birth(void)
{
    if (!(birth = malloc(BIRTH_BLOCK)))
        _exit(2);
    memset(birth, 0xb1, BIRTH_BLOCK);
}

static void worker(int ready_fd, int leaker)
{
    if (leaker == 2)
        svc_leak_at_birth();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (unsigned r = 0; r < NLIVE; r++)
        svc_serve_request(r);
    if (write(ready_fd, "r", 1) != 1)
        _exit(2);
    close(ready_fd);
    for (unsigned round = NLIVE; !stopping; round++) {
        for (int k = 0; k < 8; k++)
            svc_serve_request(round * 8 + (unsigned)k);
        if (leaker == 1)
            svc_leak_request();
        else if (leaker == 2)
            svc_leak_late_request();
        usleep(2000);
    }
    for (size_t i = 0; i < NLIVE; i++)
        check(live[i], BLOCK, live_tag[i]);
    for (size_t i = 0; i < nleaks; i++)
        check(leaks[i], LEAK_BLOCK, (unsigned char)(i & 0xff));
    if (birth)
        check(birth, BIRTH_BLOCK, 0xb1);
    say("worker %d ok\n", (int)getpid());
    if (use_exit)
        exit(0);
    _exit(0);
}

int main(int argc, char **argv)
{
    int nworkers = argc > 1 ? atoi(argv[1]) : 3, leaker = argc > 2 ? atoi(argv[2]) : 1;
    use_exit = argc > 3 && !strcmp(argv[3], "exit");
    pid_t kids[MAXWORKERS + 4];
    int fds[2];
    if (nworkers < 1 || nworkers > MAXWORKERS || pipe(fds))
        return 1;
    struct sigaction sa = { .sa_handler = on_term };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction su = { .sa_handler = on_usr1 };
    sigemptyset(&su.sa_mask);
    sigaction(SIGUSR1, &su, NULL);
    struct sigaction sb = { .sa_handler = on_usr2 };
    sigemptyset(&sb.sa_mask);
    sigaction(SIGUSR2, &sb, NULL);
    for (int i = 0; i < nworkers; i++) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            close(fds[0]);
            worker(fds[1], i == leaker);
        }
        kids[i] = c;
        say("worker %d\n", (int)c);
        if (i == leaker)
            say("leaker %d\n", (int)c);
    }
    close(fds[1]);
    char r;
    for (int i = 0; i < nworkers; i++)
        if (read(fds[0], &r, 1) != 1)
            return 1;
    say("ready %d\n", (int)getpid());
    while (!stopping) {
        if (fork_one && nworkers < MAXWORKERS + 4) {
            int p2[2];
            fork_one = 0;
            if (pipe(p2))
                return 1;
            pid_t c = fork();
            if (c < 0)
                return 1;
            if (c == 0) {
                close(p2[0]);
                worker(p2[1], 2);
            }
            close(p2[1]);
            if (read(p2[0], &r, 1) != 1)
                return 1;
            close(p2[0]);
            kids[nworkers++] = c;
            say("late %d\n", (int)c);
            continue;
        }
        if (fork_brief) {
            fork_brief = 0;
            pid_t c = fork();
            if (c < 0)
                return 1;
            if (c == 0)
                svc_brief_child();
            int st;
            int good = waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
            say(good ? "brief %d ok\n" : "brief %d bad\n", (int)c);
            continue;
        }
        sleep(1); /* a signal just before a pause() would wait for ever */
    }
    int bad = 0;
    for (int i = 0; i < nworkers; i++) {
        int st;
        kill(kids[i], SIGTERM);
        if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
            bad++;
    }
    if (!bad)
        say("master ok %d\n", nworkers);
    return bad ? 1 : 0;
}
