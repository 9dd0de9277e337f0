/* fork_server.c - a pre-fork server in miniature that forks its workers
 * while it is profiled (issue 28: forks followed, a worker's last words).
 * argv[1]: the directory of the profiler's sockets (to look for one).
 * Commands (pl_common.h):
 *   prefork   the parent keeps PREFORK_N blocks of PREFORK_SIZE bytes from
 *             parent_before_fork() (sampled in its session: the workers
 *             inherit them) -> "done prefork"
 *   fork      fork(): the worker's first allocation is worker_first_alloc
 *             (FIRST_SIZE bytes), then it frees every inherited block,
 *             keeps WORKER_N blocks from worker_alloc() and says "worker
 *             PID ready"; the parent keeps AFTER_N blocks from
 *             parent_after_fork() -> "forked PID"
 *   fork-as U as fork, and the worker becomes user U (setgroups, setgid,
 *             setuid: nginx's workers under a root master) right after
 *             its first allocation -> "forked PID"
 *   check     the parent checks its blocks -> "check errors=N"
 *   reap [P]  waits for worker P (any worker without P) -> "reaped PID
 *             code=C" or "sig=S"
 *   forks N E N times fork(), the child allocates once and ends (E:
 *             "exit" calls exit(0), anything else _exit(0)), waitpid ->
 *             "forks N ms=MS bad=B" (B children that did not end with 0)
 *   churn N   N threads that malloc, free and walk the loaded modules
 *             (dl_iterate_phdr: the loader's lock, held across a fork by
 *             some) -> "churning N"
 *   unchurn   ends them -> "churned"
 *   vfork     a vfork child (and then a syscall(SYS_fork) child) looks for
 *             a socket of its own pid -> "vfork socket=0|1 rawfork
 *             socket=0|1"
 * A worker waits for signals: SIGHUP checks its blocks -> "worker PID
 * check errors=N"; SIGUSR1 keeps LAST_SIZE bytes from worker_last_alloc()
 * and calls exit(7); SIGUSR2 execs "sleep 1000"; SIGWINCH keeps LATE_SIZE
 * bytes more from worker_late_alloc() -> "worker PID late" (an allocation
 * well after the fork: a lazily started agent's); SIGTERM exits 0.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <errno.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pl_common.h"

#define PREFORK_N 8
#define PREFORK_SIZE 3001
#define FIRST_SIZE 11111
#define WORKER_N 20
#define WORKER_SIZE 4099
#define AFTER_N 5
#define AFTER_SIZE 7001
#define LAST_SIZE 6007
#define LATE_SIZE 5003

static const char *sockdir = "/nonexistent";
static char *inherited[PREFORK_N];
static char *after[AFTER_N * 16];
static int nafter;

/* Output of a worker: write(2), no stdio buffer shared with the parent. */
static void say_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_raw(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    buf[n] = '\n';
    if (write(1, buf, (size_t)n + 1) < 0)
        _exit(3);
}

static char *filled(size_t size, int tag)
{
    char *p = malloc(size);
    if (p)
        memset(p, tag, size);
    return p;
}

static int bad_block(const char *p, size_t size, int tag)
{
    if (!p)
        return 1;
    for (size_t i = 0; i < size; i++)
        if (p[i] != (char)tag)
            return 1;
    return 0;
}

__attribute__((noinline)) static char *parent_before_fork(int i) { return filled(PREFORK_SIZE, 'a' + i); }
__attribute__((noinline)) static char *parent_after_fork(int i) { return filled(AFTER_SIZE, 'A' + i % 16); }
__attribute__((noinline)) static char *worker_first_alloc(void) { return filled(FIRST_SIZE, 'f'); }
__attribute__((noinline)) static char *worker_alloc(int i) { return filled(WORKER_SIZE, 'k' + i % 8); }
__attribute__((noinline)) static char *worker_last_alloc(void) { return filled(LAST_SIZE, 'z'); }
__attribute__((noinline)) static char *worker_late_alloc(void) { return filled(LATE_SIZE, 'y'); }

static int socket_of(pid_t pid)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%d.sock", sockdir, (int)pid);
    return stat(path, &st) == 0;
}

static long worker_uid = -1; /* fork-as: the user the next worker becomes */

static void worker(void)
{
    /* The first allocation past the fork. */
    char *first = worker_first_alloc();
    if (worker_uid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)worker_uid) != 0 ||
                            setuid((uid_t)worker_uid) != 0 || getuid() != (uid_t)worker_uid))
        say_raw("worker %d BAD setuid %ld: %s", (int)getpid(), worker_uid, strerror(errno));
    /* Blocks the parent sampled before the fork: not this process's. */
    for (int i = 0; i < PREFORK_N; i++) {
        if (bad_block(inherited[i], PREFORK_SIZE, 'a' + i))
            say_raw("worker BAD inherited %d", i);
        free(inherited[i]);
        inherited[i] = NULL;
    }
    char *own[WORKER_N];
    for (int i = 0; i < WORKER_N; i++)
        own[i] = worker_alloc(i);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGWINCH);
    sigprocmask(SIG_BLOCK, &set, NULL);
    say_raw("worker %d ready", (int)getpid());
    char *late = NULL;
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            int errors = bad_block(first, FIRST_SIZE, 'f');
            for (int i = 0; i < WORKER_N; i++)
                errors += bad_block(own[i], WORKER_SIZE, 'k' + i % 8);
            say_raw("worker %d check errors=%d", (int)getpid(), errors);
        } else if (sig == SIGUSR1) {
            char *last = worker_last_alloc();
            say_raw("worker %d exiting %s", (int)getpid(), bad_block(last, LAST_SIZE, 'z') ? "BAD" : "ok");
            exit(7);
        } else if (sig == SIGWINCH) {
            if (!late)
                late = worker_late_alloc();
            say_raw("worker %d late %s", (int)getpid(), bad_block(late, LATE_SIZE, 'y') ? "BAD" : "ok");
        } else if (sig == SIGUSR2) {
            sigprocmask(SIG_UNBLOCK, &set, NULL);
            execl("/bin/sleep", "sleep", "1000", (char *)NULL);
            _exit(4);
        } else {
            exit(0);
        }
    }
}

static int count_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(int *)data;
    return 0;
}

static int churn_stop;
static pthread_t churners[8];
static int nchurners;

static void *churn(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !__atomic_load_n(&churn_stop, __ATOMIC_RELAXED); i++) {
        char *p = filled(16 + i % 4000, 'c');
        int mods = 0;
        dl_iterate_phdr(count_module, &mods);
        if (bad_block(p, 16 + i % 4000, 'c') || mods == 0)
            say_raw("churn BAD");
        free(p);
    }
    return NULL;
}

static int vfork_saw;

static int handle(const char *cmd, const char *arg)
{
    (void)arg;
    if (strcmp(cmd, "prefork") == 0) {
        for (int i = 0; i < PREFORK_N; i++) {
            free(inherited[i]);
            inherited[i] = parent_before_fork(i);
        }
        pl_say("done prefork");
    } else if (strcmp(cmd, "fork") == 0 || strcmp(cmd, "fork-as") == 0) {
        worker_uid = strcmp(cmd, "fork-as") == 0 ? atol(arg) : -1;
        pid_t pid = fork();
        if (pid == 0)
            worker();
        for (int i = 0; i < AFTER_N && nafter < (int)(sizeof(after) / sizeof(after[0])); i++, nafter++)
            after[nafter] = parent_after_fork(nafter);
        pl_say("forked %d", (int)pid);
    } else if (strcmp(cmd, "check") == 0) {
        int errors = 0;
        for (int i = 0; i < PREFORK_N; i++)
            errors += inherited[i] && bad_block(inherited[i], PREFORK_SIZE, 'a' + i);
        for (int i = 0; i < nafter; i++)
            errors += bad_block(after[i], AFTER_SIZE, 'A' + i % 16);
        pl_say("check errors=%d", errors);
    } else if (strcmp(cmd, "reap") == 0) {
        int st;
        pid_t pid = waitpid(*arg ? (pid_t)atoi(arg) : -1, &st, 0);
        if (pid > 0 && WIFEXITED(st))
            pl_say("reaped %d code=%d", (int)pid, WEXITSTATUS(st));
        else
            pl_say("reaped %d sig=%d", (int)pid, pid > 0 && WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    } else if (strcmp(cmd, "forks") == 0) {
        int n = atoi(arg), use_exit = strstr(arg, "exit") && !strstr(arg, "_exit"), bad = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                char *p = worker_first_alloc();
                int code = bad_block(p, FIRST_SIZE, 'f');
                free(p);
                if (use_exit)
                    exit(code);
                _exit(code);
            }
            int st = -1;
            if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                bad++;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        pl_say("forks %d ms=%.1f bad=%d", n, (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, bad);
    } else if (strcmp(cmd, "churn") == 0) {
        int n = atoi(arg);
        __atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < n && nchurners < 8; i++)
            if (pthread_create(&churners[nchurners], NULL, churn, NULL) == 0)
                nchurners++;
        pl_say("churning %d", nchurners);
    } else if (strcmp(cmd, "unchurn") == 0) {
        __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
        while (nchurners > 0)
            pthread_join(churners[--nchurners], NULL);
        pl_say("churned");
    } else if (strcmp(cmd, "vfork") == 0) {
        vfork_saw = -1;
        pid_t pid = vfork();
        if (pid == 0) {
            /* Shares the parent's memory until _exit. */
            vfork_saw = socket_of(getpid());
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        int fds[2];
        char c = '?';
        if (pipe(fds) == 0) {
            pid = (pid_t)syscall(SYS_fork);
            if (pid == 0) {
                char s = socket_of((pid_t)syscall(SYS_getpid)) ? '1' : '0';
                if (write(fds[1], &s, 1) < 0)
                    _exit(3);
                _exit(0);
            }
            if (read(fds[0], &c, 1) != 1)
                c = '?';
            waitpid(pid, NULL, 0);
            close(fds[0]);
            close(fds[1]);
        }
        pl_say("vfork socket=%d rawfork socket=%c", vfork_saw, c);
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        sockdir = argv[1];
    return pl_serve(handle);
}
