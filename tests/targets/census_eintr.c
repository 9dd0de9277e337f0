/* census_eintr.c - a target whose threads wait in the calls a ptrace stop
 * ends with a bare EINTR (recv on a socket with SO_RCVTIMEO, epoll_wait,
 * sigtimedwait, io_uring_enter with a timeout), for
 * tests/e2e/census_eintr.sh: does a census's freeze make one of them fail
 * with EINTR where the program, left alone, would not see one? Each wait
 * ends by itself within 2 s; an EINTR is counted per call.
 *
 * Holds a list of 2,000 blocks whose contents it checks. Prints "ready"
 * once every thread waits; "status" on stdin prints
 * "status recv=N epoll=N sigtimedwait=N io_uring=N rounds=M data=ok|BAD"
 * (the EINTR counts); io_uring is "skip" (with a line saying why) when the
 * kernel refuses it. */
#include <errno.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { W_RECV, W_EPOLL, W_SIGTIMEDWAIT, W_IO_URING, W_N };
static const char *names[W_N] = { "recv", "epoll", "sigtimedwait", "io_uring" };
static atomic_ulong eintr[W_N], rounds;
static atomic_int waiting;
static int skip_uring;
static int sock_fd, epoll_fd, uring_fd = -1;

struct node {
    struct node *next;
    unsigned id, sum;
    unsigned char body[48];
};
static struct node *list;

static void count(int w, long r, int timeout_errno)
{
    if (r < 0 && errno == EINTR)
        atomic_fetch_add(&eintr[w], 1);
    else if (r < 0 && errno != timeout_errno)
        fprintf(stderr, "%s: %s\n", names[w], strerror(errno));
    atomic_fetch_add(&rounds, 1);
}

static void *waiter(void *arg)
{
    int w = (int)(long)arg;
    char buf[64];
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    atomic_fetch_add(&waiting, 1);
    for (;;) {
        if (w == W_RECV) {
            count(w, recv(sock_fd, buf, sizeof(buf), 0), EAGAIN);
        } else if (w == W_EPOLL) {
            struct epoll_event ev;
            count(w, epoll_wait(epoll_fd, &ev, 1, 2000), 0);
        } else if (w == W_SIGTIMEDWAIT) {
            struct timespec ts = { 2, 0 };
            count(w, sigtimedwait(&set, NULL, &ts), EAGAIN);
        } else {
            struct __kernel_timespec ts = { 2, 0 };
            struct io_uring_getevents_arg a = { .ts = (uint64_t)(uintptr_t)&ts };
            count(w, syscall(SYS_io_uring_enter, uring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &a,
                             sizeof(a)),
                  ETIME);
        }
    }
    return NULL;
}

static unsigned sum_of(const struct node *n)
{
    unsigned s = n->id * 2654435761u;
    for (size_t i = 0; i < sizeof(n->body); i++)
        s = s * 31 + n->body[i];
    return s;
}

static int data_ok(void)
{
    unsigned seen = 0;
    for (struct node *n = list; n; n = n->next, seen++)
        if (n->sum != sum_of(n))
            return 0;
    return seen == 2000;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (unsigned i = 0; i < 2000; i++) {
        struct node *n = malloc(sizeof(*n));
        n->id = i;
        for (size_t b = 0; b < sizeof(n->body); b++)
            n->body[b] = (unsigned char)(i + b);
        n->sum = sum_of(n);
        n->next = list;
        list = n;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* for sigtimedwait, in every thread */
    int sv[2], pfd[2];
    struct timeval tv = { 2, 0 };
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        pipe(pfd) < 0 || (epoll_fd = epoll_create1(0)) < 0) {
        perror("setup");
        return 1;
    }
    sock_fd = sv[0];
    struct epoll_event ev = { .events = EPOLLIN };
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pfd[0], &ev);
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    uring_fd = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (uring_fd < 0) {
        printf("io_uring skipped: io_uring_setup: %s\n", strerror(errno));
        skip_uring = 1;
    } else if (!(p.features & IORING_FEAT_EXT_ARG)) {
        printf("io_uring skipped: no IORING_FEAT_EXT_ARG (no wait timeout)\n");
        skip_uring = 1;
    }
    int nw = skip_uring ? W_IO_URING : W_N;
    for (int w = 0; w < nw; w++) {
        pthread_t th;
        pthread_create(&th, NULL, waiter, (void *)(long)w);
    }
    while (atomic_load(&waiting) < nw)
        usleep(1000);
    printf("ready\n");
    char line[64];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "status", 6)) {
            char out[256];
            int o = snprintf(out, sizeof(out), "status");
            for (int w = 0; w < W_N; w++)
                if (w == W_IO_URING && skip_uring)
                    o += snprintf(out + o, sizeof(out) - (size_t)o, " %s=skip", names[w]);
                else
                    o += snprintf(out + o, sizeof(out) - (size_t)o, " %s=%lu", names[w], atomic_load(&eintr[w]));
            printf("%s rounds=%lu data=%s\n", out, atomic_load(&rounds), data_ok() ? "ok" : "BAD");
        }
    return 0;
}
