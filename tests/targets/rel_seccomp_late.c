/* rel_seccomp_late.c - a program that sandboxes itself after start-up,
 * while heapinject may be attached (issue 25, item 1).
 *
 *   rel_seccomp_late [--pre ACTION:CALLS]
 *
 * --pre installs a filter before "ready", for this (then only) thread:
 * ACTION (kill or errno, EPERM) on each of CALLS, everything else allowed,
 * e.g. kill:acct (a filter that allows all heapinject makes) or
 * errno:userfaultfd.
 *
 * stdin commands:
 *   filter CALLS   installs, for every thread (SECCOMP_FILTER_FLAG_TSYNC),
 *                  a filter that answers SECCOMP_RET_KILL_PROCESS to each
 *                  of CALLS (comma-separated: openat, mprotect, madvise,
 *                  poll, pause, acct, userfaultfd, ioctl)
 *                  and allows everything else; prints "filtered N" (N: the
 *                  filters in place now) or "filter-failed ERR"
 *   filter-raw CALLS
 *                  as filter, with the syscall instruction itself (no
 *                  function a profiler hooks sees it)
 *   thread-filter CALLS
 *                  starts a thread that installs, for itself only (no
 *                  TSYNC), a filter that answers KILL_PROCESS to each of
 *                  CALLS (openat, ..., gettid, getpid); prints
 *                  "thread-filtered TID" once it runs under it
 *   thread-filter-raw CALLS
 *                  as thread-filter, the filter installed with the syscall
 *                  instruction itself (no function a profiler hooks)
 *   thread-work    that thread starts allocating and checking blocks of
 *                  its own in a loop (its errors count with the others)
 *   thread-filter-now CALLS HOW
 *                  as thread-filter, but the thread allocates right after
 *                  its filter is in, with no wait and no sleep for its
 *                  first 2,000 rounds (then 1 ms between rounds). HOW is
 *                  how it installs the filter: "syscall" (syscall(SYS_seccomp),
 *                  for itself), "prctl" (prctl(PR_SET_SECCOMP), for
 *                  itself), "tsync" (syscall(SYS_seccomp) with
 *                  SECCOMP_FILTER_FLAG_TSYNC: every thread) or "raw"
 *                  (the syscall instruction, for itself); prints
 *                  "thread-filtered TID" once the filter is in
 *   status         prints "status rounds=N errors=E wrounds=W" (W: the
 *                  filtered thread's rounds)
 *   quit           prints "done rounds=N errors=E" and exits 0 when E is 0
 *
 * Prints "ready" first. Its own wait is ppoll, so a filter may forbid
 * poll. Between commands it allocates small blocks (main
 * arena, below the mmap threshold: brk only, never one of the calls it may
 * forbid), fills each with a pattern of its own and checks it before
 * freeing. It never makes a forbidden call itself.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256

static unsigned long rounds, errors;
static unsigned char *blocks[SLOTS];
static size_t sizes[SLOTS];

static int call_nr(const char *name)
{
    if (!strcmp(name, "openat"))
        return __NR_openat;
    if (!strcmp(name, "mprotect"))
        return __NR_mprotect;
    if (!strcmp(name, "madvise"))
        return __NR_madvise;
    if (!strcmp(name, "poll"))
        return __NR_poll;
    if (!strcmp(name, "pause"))
        return __NR_pause;
    if (!strcmp(name, "acct"))
        return __NR_acct;
    if (!strcmp(name, "userfaultfd"))
        return __NR_userfaultfd;
    if (!strcmp(name, "gettid"))
        return __NR_gettid;
    if (!strcmp(name, "getpid"))
        return __NR_getpid;
    if (!strcmp(name, "rt_sigprocmask"))
        return __NR_rt_sigprocmask;
    if (!strcmp(name, "sched_yield"))
        return __NR_sched_yield;
    if (!strcmp(name, "ioctl"))
        return __NR_ioctl;
    return -1;
}

static int filters_now(void)
{
    /* Read before the filter goes in would be wrong after: the count is
     * computed, not read (openat may be forbidden by now). */
    static int n;
    return ++n;
}

/* seccomp(2) by the instruction itself: no function a profiler could
 * hook (a static libseccomp, inline assembly). */
static long raw_seccomp(unsigned long op, unsigned long flags, void *args)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"((long)__NR_seccomp), "D"(op), "S"(flags), "d"(args) : "rcx", "r11", "memory");
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

/* via: 0 syscall(), 1 prctl(), 2 the raw instruction. */
static int install_how(char *list, unsigned action, unsigned flags, int via)
{
    struct sock_filter prog[64];
    unsigned n = 0;
    int nrs[8], k = 0;
    for (char *tok = strtok(list, ","); tok && k < 8; tok = strtok(NULL, ",")) {
        if ((nrs[k] = call_nr(tok)) < 0)
            return -EINVAL;
        k++;
    }
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < k; i++) {
        prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
        prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
    }
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fp = { (unsigned short)n, prog };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -errno;
    long r = via == 1   ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0)
             : via == 2 ? raw_seccomp(SECCOMP_SET_MODE_FILTER, flags, &fp)
                        : syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
    if (r < 0)
        return via == 2 ? (int)r : -errno; /* the raw instruction answers -errno */
    if (r > 0)
        return -EAGAIN; /* a thread could not be synchronized (its tid) */
    return filters_now();
}

static int install(char *list, unsigned action, unsigned flags)
{
    return install_how(list, action, flags, 0);
}

static char worker_calls[256];
static volatile int worker_tid; /* >0 filtered, <0 -errno */
static volatile int worker_go;
/* 0 thread-filter, 5 thread-filter-raw; 1 syscall, 2 prctl, 3 tsync, 4 raw: thread-filter-now */
static int worker_how;
static unsigned long worker_rounds;

/* The worker of thread-filter: its own blocks, checked as churn's are;
 * its errors count with the main thread's. */
static void *worker(void *arg)
{
    (void)arg;
    int tid = (int)syscall(__NR_gettid); /* before: the filter may kill gettid */
    int f = install_how(worker_calls, SECCOMP_RET_KILL_PROCESS, worker_how == 3 ? SECCOMP_FILTER_FLAG_TSYNC : 0,
                        worker_how == 2 ? 1 : worker_how >= 4 ? 2 : 0);
    if (f < 0) {
        worker_tid = f;
        return NULL;
    }
    worker_tid = tid;
    while (!worker_go && (worker_how == 0 || worker_how == 5)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    unsigned char *mine[64] = { 0 };
    size_t len[64] = { 0 };
    unsigned seed = 7;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned s = (seed >> 16) % 64;
            if (mine[s]) {
                for (size_t j = 0; j < len[s]; j++)
                    if (mine[s][j] != (unsigned char)(s * 3 + j))
                        __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
                free(mine[s]);
            }
            len[s] = 16 + (seed >> 8) % 3000;
            mine[s] = malloc(len[s]);
            if (!mine[s]) {
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
                continue;
            }
            for (size_t j = 0; j < len[s]; j++)
                mine[s][j] = (unsigned char)(s * 3 + j);
        }
        if (__atomic_add_fetch(&worker_rounds, 1, __ATOMIC_RELAXED) < 2000 && worker_how && worker_how != 5)
            continue; /* thread-filter-now: no sleep at first */
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void churn(void)
{
    for (int i = 0; i < 64; i++) {
        unsigned s = (unsigned)(rand() % SLOTS);
        if (blocks[s]) {
            for (size_t j = 0; j < sizes[s]; j++)
                if (blocks[s][j] != (unsigned char)(s + j))
                    errors++;
            free(blocks[s]);
        }
        sizes[s] = 16 + (size_t)(rand() % 2000);
        blocks[s] = malloc(sizes[s]);
        if (!blocks[s]) {
            errors++;
            continue;
        }
        for (size_t j = 0; j < sizes[s]; j++)
            blocks[s][j] = (unsigned char)(s + j);
    }
    rounds++;
}

int main(int argc, char **argv)
{
    char line[256];
    size_t have = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "--pre")) {
        char *colon = strchr(argv[2], ':');
        unsigned action = colon && !strncmp(argv[2], "kill:", 5)    ? SECCOMP_RET_KILL_PROCESS
                          : colon && !strncmp(argv[2], "errno:", 6) ? SECCOMP_RET_ERRNO | EPERM
                                                                    : 0;
        int f = action ? install(colon + 1, action, 0) : -EINVAL;
        if (f < 0) {
            fprintf(stderr, "--pre %s: %s\n", argv[2], strerror(-f));
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: rel_seccomp_late [--pre kill|errno:CALLS]\n");
        return 2;
    }
    printf("ready\n");
    for (;;) {
        churn();
        struct pollfd p = { 0, POLLIN, 0 };
        struct timespec ts = { 0, 2000000 };
        if (ppoll(&p, 1, &ts, NULL) <= 0)
            continue;
        ssize_t r = read(0, line + have, sizeof(line) - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        line[have] = '\0';
        char *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            if (!strncmp(line, "filter ", 7) || !strncmp(line, "filter-raw ", 11)) {
                int raw = line[6] == '-';
                int f = install_how(line + (raw ? 11 : 7), SECCOMP_RET_KILL_PROCESS, SECCOMP_FILTER_FLAG_TSYNC,
                                    raw ? 2 : 0);
                if (f < 0)
                    printf("filter-failed %s\n", strerror(-f));
                else
                    printf("filtered %d\n", f);
            } else if (!strncmp(line, "thread-filter ", 14) || !strncmp(line, "thread-filter-now ", 18) ||
                       !strncmp(line, "thread-filter-raw ", 18)) {
                pthread_t t;
                if (!strncmp(line, "thread-filter-raw ", 18)) {
                    worker_how = 5;
                    memmove(line + 13, line + 17, strlen(line + 17) + 1); /* "thread-filter CALLS" */
                }
                if (!strncmp(line, "thread-filter-now ", 18)) {
                    char *how = strrchr(line, ' ');
                    *how++ = '\0';
                    worker_how = !strcmp(how, "prctl") ? 2 : !strcmp(how, "tsync") ? 3 : !strcmp(how, "raw") ? 4 : 1;
                    memmove(line + 13, line + 17, strlen(line + 17) + 1); /* "thread-filter CALLS" */
                }
                /* The worker allocates from the main arena (brk): a
                 * thread arena of its own grows with mprotect and
                 * shrinks with madvise, which its filter may kill. */
                mallopt(M_ARENA_MAX, 1);
                snprintf(worker_calls, sizeof(worker_calls), "%s", line + 14);
                if (pthread_create(&t, NULL, worker, NULL) != 0) {
                    printf("thread-filter-failed pthread_create\n");
                } else {
                    while (!worker_tid)
                        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
                    if (worker_tid < 0)
                        printf("thread-filter-failed %s\n", strerror(-worker_tid));
                    else
                        printf("thread-filtered %d\n", worker_tid);
                }
            } else if (!strcmp(line, "thread-work")) {
                worker_go = 1;
                printf("thread-working\n");
            } else if (!strcmp(line, "status")) {
                printf("status rounds=%lu errors=%lu wrounds=%lu\n", rounds, errors,
                       __atomic_load_n(&worker_rounds, __ATOMIC_RELAXED));
            } else if (!strcmp(line, "quit")) {
                printf("done rounds=%lu errors=%lu\n", rounds, errors);
                return errors ? 1 : 0;
            }
            have -= (size_t)(nl + 1 - line);
            memmove(line, nl + 1, have + 1);
        }
    }
    printf("done rounds=%lu errors=%lu\n", rounds, errors);
    return errors ? 1 : 0;
}
