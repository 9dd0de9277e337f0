/* rel_strict.c - a process whose only thread runs in seccomp strict mode
 * (prctl PR_SET_SECCOMP, SECCOMP_MODE_STRICT): from then on it may only
 * read, write, exit and rt_sigreturn; any other system call kills it.
 * A sandboxed worker of this kind (the original seccomp use) must be
 * refused, not killed, by an injection.
 *
 * Prints "ready", then for each byte read on stdin writes "alive N\n"
 * (N counts the bytes); "q" ends it with exit(0) through the raw syscall
 * (glibc's exit would call exit_group, which strict mode forbids).
 *
 *   rel_strict          the main thread is the strict one
 *   rel_strict worker   a second thread enters strict mode (and waits in
 *                       read on a pipe); the main thread, not strict,
 *                       answers stdin. An injection may hold the main
 *                       thread, but the hooks would run in the worker. */
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int worker_pipe[2];
static volatile int worker_strict;

static void *strict_worker(void *arg)
{
    char c;

    (void)arg;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
        return NULL;
    worker_strict = 1;
    while (syscall(SYS_read, worker_pipe[0], &c, 1) == 1) {
    }
    syscall(SYS_exit, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    char msg[32] = "alive ";
    unsigned n = 0;
    int worker = argc > 1 && !strcmp(argv[1], "worker");

    if (worker) {
        pthread_t t;
        if (pipe(worker_pipe) || pthread_create(&t, NULL, strict_worker, NULL))
            return 1;
        while (!worker_strict)
            usleep(1000);
    }
    printf("ready\n");
    fflush(stdout);
    if (!worker && prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
        perror("prctl(PR_SET_SECCOMP)");
        return 1;
    }
    for (;;) {
        char c;
        if (syscall(SYS_read, 0, &c, 1) != 1 || c == 'q')
            break;
        n++;
        /* No snprintf: it may allocate. */
        int len = 6;
        char digits[12];
        int d = 0;
        for (unsigned v = n; v || !d; v /= 10)
            digits[d++] = (char)('0' + v % 10);
        while (d)
            msg[len++] = digits[--d];
        msg[len++] = '\n';
        syscall(SYS_write, 1, msg, len);
    }
    syscall(SYS_exit, 0);
    return 0;
}
