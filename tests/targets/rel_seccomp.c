/* rel_seccomp.c - a target under a seccomp filter, for the reliability
 * tests of injection into sandboxed processes.
 *
 *   rel_seccomp trap-openat | trap-mmap    the syscall raises SIGSYS
 *   rel_seccomp errno-openat | errno-mmap  the syscall fails with EPERM
 *   rel_seccomp allow                      a filter that forbids only
 *                                          acct(2): everything we need works
 *   rel_seccomp deny-munmap                munmap fails with EPERM (the
 *                                          injector's rescue page must not
 *                                          count on unmapping itself)
 *   rel_seccomp ACTION:SYSCALL             ACTION (kill_process, kill_thread,
 *                                          trap, errno, errno_enosys, trace,
 *                                          log, user_notif) on SYSCALL
 *                                          (socket, clone3, pidfd_open,
 *                                          openat, eventfd2)
 *   rel_seccomp allowlist                  only the calls this loop makes;
 *                                          anything else kills the process
 *   rel_seccomp thread-MODE                MODE's filter, installed by a
 *                                          second thread for itself only
 *                                          (no TSYNC), which then allocates
 *                                          too: the threads' filters differ
 *
 * After the filter is in place it prints "ready" and allocates small blocks
 * (below the mmap threshold: brk only) in a loop, checking their contents,
 * until "quit" on stdin; then prints "done rounds=N errors=E" and exits 0
 * when E is 0. It never makes the forbidden call itself.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* "ACTION:SYSCALL", e.g. "kill_process:socket", "errno_enosys:clone3". */
static int parse_action_mode(const char *mode, unsigned *nr, unsigned *action)
{
    static const struct { const char *name; unsigned action; } acts[] = {
        { "kill_process", SECCOMP_RET_KILL_PROCESS }, { "kill_thread", SECCOMP_RET_KILL_THREAD },
        { "trap", SECCOMP_RET_TRAP }, { "errno", SECCOMP_RET_ERRNO | EPERM },
        { "errno_enosys", SECCOMP_RET_ERRNO | ENOSYS }, { "trace", SECCOMP_RET_TRACE },
        { "log", SECCOMP_RET_LOG }, { "user_notif", SECCOMP_RET_USER_NOTIF },
    };
    static const struct { const char *name; unsigned nr; } calls[] = {
        { "socket", __NR_socket }, { "clone3", __NR_clone3 }, { "pidfd_open", __NR_pidfd_open },
        { "openat", __NR_openat }, { "eventfd2", __NR_eventfd2 },
    };
    const char *colon = strchr(mode, ':');
    if (!colon)
        return 0;
    int a = -1, c = -1;
    for (unsigned i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
        if (strlen(acts[i].name) == (size_t)(colon - mode) && !strncmp(mode, acts[i].name, colon - mode))
            a = (int)i;
    for (unsigned i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (!strcmp(colon + 1, calls[i].name))
            c = (int)i;
    if (a < 0 || c < 0)
        return 0;
    *nr = calls[c].nr;
    *action = acts[a].action;
    return 1;
}

static struct sock_fprog worker_prog;
static unsigned worker_flags;
static volatile int worker_state; /* 1 filtered, -1 failed */

/* thread-MODE: the filter is this thread's alone; it allocates from then
 * on, as the main thread does. */
static void *filtered_worker(void *arg)
{
    (void)arg;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, worker_flags, &worker_prog) < 0) {
        worker_state = -1;
        return NULL;
    }
    worker_state = 1;
    for (;;) {
        free(malloc(100));
        usleep(1000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned nr, action;
    int in_thread = !strncmp(mode, "thread-", 7);

    if (in_thread)
        mode += 7;

    if (!strcmp(mode, "trap-openat")) {
        nr = __NR_openat, action = SECCOMP_RET_TRAP;
    } else if (!strcmp(mode, "trap-mmap")) {
        nr = __NR_mmap, action = SECCOMP_RET_TRAP;
    } else if (!strcmp(mode, "errno-openat")) {
        nr = __NR_openat, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "errno-mmap")) {
        nr = __NR_mmap, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "deny-munmap")) {
        nr = __NR_munmap, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "allow")) {
        nr = __NR_acct, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "allowlist")) {
        nr = 0, action = 0; /* below */
    } else if (parse_action_mode(mode, &nr, &action)) {
    } else {
        fprintf(stderr, "usage: rel_seccomp trap-openat|trap-mmap|errno-openat|errno-mmap|deny-munmap|allow|"
                        "allowlist|ACTION:SYSCALL\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
    /* An allow-list, as sandboxes write them: what this loop needs, and
     * nothing else (KILL_PROCESS). */
    static const unsigned allowed[] = {
        __NR_read, __NR_write, __NR_poll, __NR_brk, __NR_mmap, __NR_munmap, __NR_mremap,
        __NR_exit_group, __NR_exit, __NR_futex, __NR_rt_sigreturn, __NR_newfstatat,
        __NR_madvise, __NR_getrandom,
        __NR_restart_syscall, /* every allow-list has it: a stopped poll() restarts through it */
    };
    enum { NALLOWED = sizeof(allowed) / sizeof(allowed[0]) };
    struct sock_filter al[NALLOWED + 3];
    if (!strcmp(mode, "allowlist")) {
        al[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        for (unsigned i = 0; i < NALLOWED; i++)
            al[1 + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, allowed[i], NALLOWED - i, 0);
        al[1 + NALLOWED] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
        al[2 + NALLOWED] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        prog = (struct sock_fprog){ NALLOWED + 3, al };
    }

    /* stdio buffers now: no mmap after the filter */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("mode %s\n", mode);
    char line[64];
    /* USER_NOTIF needs a listener: the filter is installed with
     * seccomp(2) and the listener fd kept, never read (a call it catches
     * waits for an answer that never comes). */
    unsigned flags = (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF
                         ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
    if (in_thread) {
        pthread_t t;
        worker_prog = prog;
        worker_flags = flags;
        if (pthread_create(&t, NULL, filtered_worker, NULL))
            return 2;
        while (!worker_state)
            usleep(1000);
        if (worker_state < 0) {
            fprintf(stderr, "seccomp in the worker failed\n");
            return 2;
        }
    } else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
               syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog) < 0) {
        perror("seccomp");
        return 2;
    }
    printf("ready\n");

    unsigned long rounds = 0, errors = 0;
    void *p[64] = { 0 };
    size_t sz[64] = { 0 };
    unsigned seed = 1;
    for (;;) {
        struct pollfd pfd = { 0, POLLIN, 0 };
        if (poll(&pfd, 1, 1) > 0) {
            if (!fgets(line, sizeof(line), stdin) || !strncmp(line, "quit", 4))
                break;
            if (!strncmp(line, "status", 6))
                printf("status rounds=%lu errors=%lu\n", rounds, errors);
        }
        for (int k = 0; k < 100; k++) {
            seed = seed * 1103515245u + 12345u;
            int i = (int)(seed >> 16) % 64;
            if (p[i]) {
                for (size_t j = 0; j < sz[i]; j++)
                    if (((unsigned char *)p[i])[j] != (unsigned char)(i + j))
                        errors++;
                free(p[i]);
            }
            sz[i] = (seed >> 8) % 2000 + 1;
            p[i] = malloc(sz[i]);
            if (!p[i]) {
                errors++;
                continue;
            }
            for (size_t j = 0; j < sz[i]; j++)
                ((unsigned char *)p[i])[j] = (unsigned char)(i + j);
        }
        rounds++;
    }
    printf("done rounds=%lu errors=%lu\n", rounds, errors);
    return errors ? 1 : 0;
}
