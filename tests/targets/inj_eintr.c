/* inj_eintr.c - a target whose main thread waits in one blocking system
 * call over and over, for tests/e2e/rel_eintr.sh: does an injection make
 * the call fail with EINTR where the program, left alone, would not see
 * one? Every wait ends by itself within about 2 s (a timeout) or waits for
 * ever; an EINTR is counted, anything else is a round.
 *
 *   inj_eintr CASE   CASE: io_uring, recv_timeo, read_timeo, accept_timeo,
 *                    recvmsg_timeo, epoll, poll, select, nanosleep, futex,
 *                    sigtimedwait, pipe
 * Prints "ready" once waiting; "status" on stdin prints "status eintr=N
 * rounds=M" (a second thread answers: the injector takes the main thread
 * first); exits 77 with a reason when the case cannot run here. */
#include <errno.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static atomic_ulong eintr, rounds;
static const char *mode;
static int fd_a = -1, fd_b = -1;
static uint32_t futex_word;

static void *answer(void *arg)
{
    (void)arg;
    char line[64];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "status", 6))
            printf("status eintr=%lu rounds=%lu\n", atomic_load(&eintr), atomic_load(&rounds));
    return NULL;
}

static void count(long r)
{
    if (r < 0 && errno == EINTR)
        atomic_fetch_add(&eintr, 1);
    else
        atomic_fetch_add(&rounds, 1);
}

static void set_timeo(int fd, int opt)
{
    struct timeval tv = { 2, 0 };
    if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) < 0) {
        perror("setsockopt");
        exit(1);
    }
}

static void setup(void)
{
    int sv[2];
    if (!strcmp(mode, "recv_timeo") || !strcmp(mode, "read_timeo") || !strcmp(mode, "recvmsg_timeo")) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
            exit(1);
        fd_a = sv[0];
        fd_b = sv[1];
        set_timeo(fd_a, SO_RCVTIMEO);
    } else if (!strcmp(mode, "accept_timeo")) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "inj_eintr.%d", (int)getpid());
        fd_a = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd_a < 0 || bind(fd_a, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd_a, 1) < 0)
            exit(1);
        set_timeo(fd_a, SO_RCVTIMEO);
    } else if (!strcmp(mode, "epoll")) {
        if (pipe(sv) < 0 || (fd_a = epoll_create1(0)) < 0)
            exit(1);
        struct epoll_event ev = { .events = EPOLLIN };
        epoll_ctl(fd_a, EPOLL_CTL_ADD, sv[0], &ev);
        fd_b = sv[0];
    } else if (!strcmp(mode, "poll") || !strcmp(mode, "select") || !strcmp(mode, "pipe")) {
        if (pipe(sv) < 0)
            exit(1);
        fd_a = sv[0];
        fd_b = sv[1];
    } else if (!strcmp(mode, "sigtimedwait")) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGUSR2);
        pthread_sigmask(SIG_BLOCK, &s, NULL);
    } else if (!strcmp(mode, "io_uring")) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        fd_a = (int)syscall(SYS_io_uring_setup, 4, &p);
        if (fd_a < 0) {
            printf("io_uring unavailable: %s\n", strerror(errno));
            exit(77);
        }
        if (!(p.features & IORING_FEAT_EXT_ARG)) {
            printf("io_uring without IORING_FEAT_EXT_ARG (no wait timeout)\n");
            exit(77);
        }
    } else if (strcmp(mode, "nanosleep") && strcmp(mode, "futex")) {
        fprintf(stderr, "unknown case %s\n", mode);
        exit(2);
    }
}

static void wait_once(void)
{
    char buf[64];
    if (!strcmp(mode, "recv_timeo")) {
        count(recv(fd_a, buf, sizeof(buf), 0));
    } else if (!strcmp(mode, "read_timeo")) {
        count(read(fd_a, buf, sizeof(buf)));
    } else if (!strcmp(mode, "recvmsg_timeo")) {
        struct iovec iov = { buf, sizeof(buf) };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
        count(recvmsg(fd_a, &m, 0));
    } else if (!strcmp(mode, "accept_timeo")) {
        count(accept(fd_a, NULL, NULL));
    } else if (!strcmp(mode, "epoll")) {
        struct epoll_event ev;
        count(epoll_wait(fd_a, &ev, 1, 2000));
    } else if (!strcmp(mode, "poll")) {
        struct pollfd p = { fd_a, POLLIN, 0 };
        count(poll(&p, 1, 2000));
    } else if (!strcmp(mode, "select")) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(fd_a, &r);
        struct timeval tv = { 2, 0 };
        count(select(fd_a + 1, &r, NULL, NULL, &tv));
    } else if (!strcmp(mode, "pipe")) {
        count(read(fd_a, buf, sizeof(buf))); /* no writer: waits for ever */
    } else if (!strcmp(mode, "nanosleep")) {
        struct timespec ts = { 2, 0 };
        count(nanosleep(&ts, NULL));
    } else if (!strcmp(mode, "futex")) {
        struct timespec ts = { 2, 0 };
        long r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        count(r < 0 && errno == ETIMEDOUT ? 0 : r);
    } else if (!strcmp(mode, "sigtimedwait")) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGUSR2);
        struct timespec ts = { 2, 0 };
        long r = sigtimedwait(&s, NULL, &ts);
        count(r < 0 && errno == EAGAIN ? 0 : r);
    } else if (!strcmp(mode, "io_uring")) {
        struct __kernel_timespec ts = { 2, 0 };
        struct io_uring_getevents_arg arg = { .ts = (uint64_t)(uintptr_t)&ts };
        long r = syscall(SYS_io_uring_enter, fd_a, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
                         sizeof(arg));
        count(r < 0 && errno == ETIME ? 0 : r);
    }
}

int main(int argc, char **argv)
{
    pthread_t th;
    if (argc < 2) {
        fprintf(stderr, "usage: inj_eintr CASE\n");
        return 2;
    }
    mode = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    setup();
    pthread_create(&th, NULL, answer, NULL);
    printf("ready\n");
    for (;;)
        wait_once();
}
