/* inj_wait.c - a target that sits in one blocking state while heapinject
 * injects into it, then reports what it saw, so a test can check that the
 * injection left it exactly as before.
 *
 *   inj_wait nanosleep SECS   one nanosleep(SECS); prints its length and rc
 *   inj_wait naps SECS        nanosleep(SECS) over and over in the main
 *                             thread; prints "bad nap ..." at once for a
 *                             nap that failed (EINTR) or ended early
 *   inj_wait pipe OUTFILE     read()s stdin until a line "END"; copies the
 *                             bytes to OUTFILE; counts EINTR and SIGUSR1s
 *                             (handled with SA_RESTART)
 *   inj_wait epoll            epoll_wait() on stdin, one line per wakeup,
 *                             until "END"
 *   inj_wait condwait         main thread in pthread_cond_wait; a helper
 *                             thread reads a line from stdin and signals it
 *   inj_wait busy SECS [STOPFILE]
 *                             computes the same integer/SSE/x87 checksum
 *                             over and over for SECS or until STOPFILE
 *                             exists, counts mismatches
 *   inj_wait sighandler [--thread] [--exit-after SECS] [--in-fork|--altstack]
 *                             main thread stays inside a SIGUSR1 handler
 *                             raised from plain code (as PostgreSQL's
 *                             walwriter lives in the postmaster's handler);
 *                             --in-fork raises it from a pthread_atfork
 *                             prepare handler, inside fork() (never a safe
 *                             point); --altstack runs the handler on a
 *                             64 KiB alternate signal stack; --thread adds
 *                             a thread asleep in nanosleep; --exit-after
 *                             exits with status 3 from the handler
 *   inj_wait seccomp SECS     installs a seccomp filter that traps openat,
 *                             then sleeps SECS in short naps
 *   inj_wait nodump SECS      PR_SET_DUMPABLE 0, then sleeps
 *   inj_wait pause [seccomp|thread]
 *                             pause() over and over, SIGUSR1 and SIGUSR2
 *                             handled without SA_RESTART (thread: plus an
 *                             idle thread that blocks both); prints "woke N handled M" each time
 *                             pause returns (N wakeups, M handler runs): a
 *                             signal whose handler ran but that did not end
 *                             the pause it arrived in is a lost wakeup
 *   inj_wait sigsuspend [seccomp]
 *                             SIGUSR1 blocked, sigsuspend() with an empty mask
 *                             over and over; prints "woke N handled M
 *                             usr1_blocked B" each time it returns: B must
 *                             stay 1 (sigsuspend puts the old mask back)
 *   inj_wait ppoll_block SECS one ppoll(SECS) that blocks SIGUSR1 inside the
 *                             call only; prints rc, errno, time, handler
 *                             runs, and whether SIGUSR1 is blocked after
 *   inj_wait mainexit SECS    the main thread exits (pthread_exit, leaving a
 *                             zombie leader); a second thread sleeps SECS in
 *                             one nanosleep and reports like nanosleep
 * Each mode prints "ready" once it is in place. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

static int mode_nanosleep(double secs)
{
    struct timespec req = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) }, rem;
    double t0 = now();
    int rc, e;

    ready();
    rc = nanosleep(&req, &rem);
    e = rc ? errno : 0;
    printf("slept %.3f rc=%d errno=%d\n", now() - t0, rc, e);
    return 0;
}

static void *nap_loop(void *arg)
{
    double secs = *(double *)arg;
    struct timespec req = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

    for (;;) {
        double t0 = now(), took;
        int rc = nanosleep(&req, NULL), e = rc ? errno : 0;

        took = now() - t0;
        /* CLOCK_MONOTONIC never runs ahead of the sleep's clock by more
         * than rounding: 1 ms of slack. */
        if (rc || took < secs - 0.001) {
            printf("bad nap: slept %.3f of %.3f rc=%d errno=%d (%s)\n", took, secs, rc, e,
                   e ? strerror(e) : "short");
            fflush(stdout);
        }
    }
    return NULL;
}

/* The main thread naps: it is the one the injector seizes first. */
static int mode_naps(double secs)
{
    ready();
    nap_loop(&secs);
    return 0;
}

static volatile sig_atomic_t usr1_count;

static void count_usr1(int sig)
{
    (void)sig;
    usr1_count++;
}

static int mode_pipe(const char *outfile)
{
    FILE *out = fopen(outfile, "w");
    char buf[4096], tail[4] = "";
    long total = 0, eintr = 0;
    struct sigaction sa;

    if (!out)
        return 2;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = count_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    ready();
    for (;;) {
        ssize_t n = read(0, buf, sizeof(buf));

        if (n < 0 && errno == EINTR) {
            eintr++;
            continue;
        }
        if (n <= 0)
            break;
        fwrite(buf, 1, (size_t)n, out);
        total += n;
        /* Stop after a line "END" (checked on the last 4 bytes seen). */
        for (ssize_t i = 0; i < n; i++) {
            memmove(tail, tail + 1, 3);
            tail[3] = buf[i];
        }
        if (!memcmp(tail, "END\n", 4))
            break;
    }
    fclose(out);
    printf("read %ld bytes eintr=%ld usr1=%d\n", total, eintr, (int)usr1_count);
    return 0;
}

static int mode_epoll(void)
{
    struct epoll_event ev = { .events = EPOLLIN }, got;
    int ep = epoll_create1(0), wakeups = 0, eintr = 0;
    char buf[256];

    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev))
        return 2;
    ready();
    for (;;) {
        int n = epoll_wait(ep, &got, 1, -1);
        ssize_t r;

        if (n < 0 && errno == EINTR) {
            eintr++;
            continue;
        }
        if (n <= 0)
            return 2;
        wakeups++;
        r = read(0, buf, sizeof(buf) - 1);
        if (r <= 0)
            break;
        buf[r] = '\0';
        printf("epoll got %s", buf);
        fflush(stdout);
        if (strstr(buf, "END"))
            break;
    }
    printf("epoll wakeups=%d eintr=%d\n", wakeups, eintr);
    return 0;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char line[256];
static int have_line;

static void *reader(void *arg)
{
    (void)arg;
    if (!fgets(line, sizeof(line), stdin))
        snprintf(line, sizeof(line), "(eof)\n");
    pthread_mutex_lock(&mu);
    have_line = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static int mode_condwait(void)
{
    pthread_t th;
    int wakeups = 0;

    pthread_mutex_lock(&mu);
    pthread_create(&th, NULL, reader, NULL);
    ready();
    while (!have_line) {
        pthread_cond_wait(&cv, &mu);
        wakeups++;
    }
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);
    printf("woke with %s", line);
    printf("cond wakeups=%d\n", wakeups);
    return 0;
}

/* Read through a volatile so the compiler cannot compute work() once. */
static volatile unsigned work_seed = 1;

/* Keeps integer, SSE and x87 state live across the loop: a register the
 * injector failed to restore changes the result. */
static unsigned long long work(unsigned seed)
{
    unsigned long long h = 1469598103934665603ULL * seed;
    double d = 1.0;
    long double x = 1.0L;

    for (int i = 0; i < 2000000; i++) {
        h = (h ^ (unsigned)i) * 1099511628211ULL;
        d = d * 1.0000001 + (double)(h & 7) * 0.5;
        x = x * 1.00000001L + (long double)(i & 3);
    }
    return h ^ (unsigned long long)d ^ (unsigned long long)(x / 1e6L);
}

static int mode_busy(double secs, const char *stopfile)
{
    unsigned long long ref = work(work_seed);
    long rounds = 0, bad = 0;
    double t0;

    ready();
    t0 = now();
    while (now() - t0 < secs && !(stopfile && access(stopfile, F_OK) == 0)) {
        if (work(work_seed) != ref)
            bad++;
        rounds++;
    }
    printf("busy rounds=%ld mismatches=%ld\n", rounds, bad);
    return 0;
}

static double exit_after = -1;

static void on_usr1(int sig)
{
    static const char msg[] = "ready\n";
    struct timespec nap = { 0, 10 * 1000 * 1000 };
    double t0 = now();

    (void)sig;
    if (write(1, msg, sizeof(msg) - 1) < 0)
        _exit(2);
    for (;;) {
        nanosleep(&nap, NULL);
        if (exit_after >= 0 && now() - t0 >= exit_after)
            _exit(3);
    }
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        sleep(1);
    return NULL;
}

static void raise_usr1(void)
{
    raise(SIGUSR1);
}

static int mode_sighandler(int argc, char **argv)
{
    struct sigaction sa;
    pthread_t th;
    bool in_fork = false, altstack = false;

    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--thread"))
            pthread_create(&th, NULL, sleeper, NULL);
        else if (!strcmp(argv[i], "--exit-after") && i + 1 < argc)
            exit_after = atof(argv[++i]);
        else if (!strcmp(argv[i], "--in-fork"))
            in_fork = true;
        else if (!strcmp(argv[i], "--altstack"))
            altstack = true;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    if (altstack) {
        static char alt[64 * 1024];
        stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
        if (sigaltstack(&ss, NULL) < 0) {
            perror("sigaltstack");
            return 1;
        }
        sa.sa_flags = SA_ONSTACK;
    }
    sigaction(SIGUSR1, &sa, NULL);
    fflush(stdout);
    if (in_fork) {
        pthread_atfork(raise_usr1, NULL, NULL);
        fork(); /* the handler never returns: no child is made */
    } else {
        raise_usr1();
    }
    return 0;
}

static volatile sig_atomic_t pause_handled;

static void count_pause_usr1(int sig)
{
    (void)sig;
    pause_handled++;
}

static void allow_all_seccomp(void)
{
    /* allows everything: only makes the injector take its seccomp path */
    struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    struct sock_fprog prog = { 1, f };

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("seccomp");
        exit(2);
    }
}

static __attribute__((noreturn)) int mode_pause(int with_seccomp, int with_thread)
{
    struct sigaction sa;
    pthread_t th;
    sigset_t usr;
    long woke = 0;

    if (with_seccomp)
        allow_all_seccomp();
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = count_pause_usr1; /* no SA_RESTART: pause returns EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    if (with_thread) {
        /* a second thread that never takes them: gdb then names threads */
        sigemptyset(&usr);
        sigaddset(&usr, SIGUSR1);
        sigaddset(&usr, SIGUSR2);
        pthread_sigmask(SIG_BLOCK, &usr, NULL);
        pthread_create(&th, NULL, sleeper, NULL);
        pthread_sigmask(SIG_UNBLOCK, &usr, NULL);
    }
    ready();
    for (;;) {
        pause();
        printf("woke %ld handled %d\n", ++woke, (int)pause_handled);
        fflush(stdout);
    }
}

static __attribute__((noreturn)) int mode_sigsuspend(int with_seccomp)
{
    struct sigaction sa;
    sigset_t usr1, empty, now;
    long woke = 0;

    if (with_seccomp)
        allow_all_seccomp();

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = count_pause_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    sigemptyset(&empty);
    ready();
    for (;;) {
        sigsuspend(&empty);
        sigprocmask(SIG_BLOCK, NULL, &now);
        printf("woke %ld handled %d usr1_blocked %d\n", ++woke, (int)pause_handled,
               sigismember(&now, SIGUSR1));
        fflush(stdout);
    }
}

/* ppoll for SECS with SIGUSR1 blocked only inside the call (the thread's
 * own mask is empty): a SIGUSR1 meanwhile must not end it (rc 0 after the
 * full time, then the handler runs). Prints "ppoll rc R errno E took T
 * handled H" and exits. */
static int mode_ppoll_block(double secs)
{
    struct sigaction sa;
    sigset_t in_call;
    struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = count_pause_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigemptyset(&in_call);
    sigaddset(&in_call, SIGUSR1);
    ready();
    double t0 = now();
    int rc = ppoll(NULL, 0, &ts, &in_call);
    int e = rc < 0 ? errno : 0;
    double took = now() - t0;
    sigset_t after;
    sigprocmask(SIG_BLOCK, NULL, &after);
    printf("ppoll rc %d errno %d took %.2f handled %d usr1_blocked_after %d\n", rc, e, took,
           (int)pause_handled, sigismember(&after, SIGUSR1));
    fflush(stdout);
    return 0;
}

static void nap_for(double secs)
{
    double t0 = now();

    while (now() - t0 < secs)
        usleep(20000);
}

static int mode_seccomp(double secs)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("seccomp");
        return 2;
    }
    ready();
    nap_for(secs);
    printf("survived\n");
    return 0;
}

static int mode_nodump(double secs)
{
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    ready();
    nap_for(secs);
    return 0;
}

static double mainexit_secs;

static void *mainexit_sleeper(void *arg)
{
    (void)arg;
    exit(mode_nanosleep(mainexit_secs));
    return NULL;
}

static int mode_mainexit(double secs)
{
    pthread_t th;

    mainexit_secs = secs;
    pthread_create(&th, NULL, mainexit_sleeper, NULL);
    pthread_exit(NULL);
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    double secs = argc > 2 ? atof(argv[2]) : 3;

    if (!strcmp(m, "nanosleep"))
        return mode_nanosleep(secs);
    if (!strcmp(m, "naps"))
        return mode_naps(secs);
    if (!strcmp(m, "pause"))
        return mode_pause(argc > 2 && !strcmp(argv[2], "seccomp"),
                          argc > 2 && !strcmp(argv[2], "thread"));
    if (!strcmp(m, "ppoll_block") && argc > 2)
        return mode_ppoll_block(atof(argv[2]));
    if (!strcmp(m, "sigsuspend"))
        return mode_sigsuspend(argc > 2 && !strcmp(argv[2], "seccomp"));
    if (!strcmp(m, "pipe") && argc > 2)
        return mode_pipe(argv[2]);
    if (!strcmp(m, "epoll"))
        return mode_epoll();
    if (!strcmp(m, "condwait"))
        return mode_condwait();
    if (!strcmp(m, "busy"))
        return mode_busy(secs, argc > 3 ? argv[3] : NULL);
    if (!strcmp(m, "sighandler"))
        return mode_sighandler(argc, argv);
    if (!strcmp(m, "seccomp"))
        return mode_seccomp(secs);
    if (!strcmp(m, "nodump"))
        return mode_nodump(secs);
    if (!strcmp(m, "mainexit"))
        return mode_mainexit(secs);
    fprintf(stderr, "usage: inj_wait nanosleep|naps|pause|sigsuspend|pipe|epoll|condwait|busy|sighandler|seccomp|nodump|mainexit ...\n");
    return 2;
}
