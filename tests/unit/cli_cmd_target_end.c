/* cli_cmd_target_end.c - how a process ended, read by a process that is
 * (here) its parent but does not wait() for it: the zombie's status from
 * /proc/PID/stat, "unknown" once it is reaped, and never a status for a
 * process whose main thread exited first. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd/target_end.h"
#include "cli/process/proc.h"

/* A child that pauses until told how to end; watched before it ends. */
static pid_t start_child(struct cli_target_end *e, int pipefd[2])
{
    cr_assert_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char how = 0;
        close(pipefd[1]);
        if (read(pipefd[0], &how, 1) != 1)
            _exit(99);
        if (how == 'a')
            abort();
        _exit(how - '0');
    }
    close(pipefd[0]);
    cli_target_end_watch(e, pid);
    return pid;
}

/* Waits (without reaping) until pid is a zombie. */
static void wait_zombie(pid_t pid)
{
    for (int i = 0; i < 400 && cli_proc_alive(pid); i++) {
        struct timespec ts = { 0, 5000000L };
        nanosleep(&ts, NULL);
    }
    cr_assert(!cli_proc_alive(pid), "the child did not end");
}

Test(cli_target_end, exit_code_from_the_zombie)
{
    struct cli_target_end e;
    int p[2];
    char buf[128];
    pid_t pid = start_child(&e, p);
    cr_assert_eq(write(p[1], "7", 1), 1);
    wait_zombie(pid);
    cli_target_end_read(&e);
    cr_expect(e.known);
    cr_expect_eq(e.signal, 0);
    cr_expect_eq(e.exit_code, 7);
    cr_expect_str_eq(cli_target_end_describe(&e, buf, sizeof(buf)), "exit code 7");
    waitpid(pid, NULL, 0);
    close(p[1]);
}

Test(cli_target_end, signal_from_the_zombie)
{
    struct cli_target_end e;
    int p[2];
    char buf[128];
    pid_t pid = start_child(&e, p);
    kill(pid, SIGKILL);
    wait_zombie(pid);
    cli_target_end_read(&e);
    cr_expect(e.known);
    cr_expect_eq(e.signal, SIGKILL);
    cr_expect_str_eq(cli_target_end_describe(&e, buf, sizeof(buf)), "killed by signal 9, SIGKILL");
    waitpid(pid, NULL, 0);
    close(p[1]);
}

Test(cli_target_end, unknown_once_reaped)
{
    struct cli_target_end e;
    int p[2];
    char buf[128];
    pid_t pid = start_child(&e, p);
    cr_assert_eq(write(p[1], "3", 1), 1);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid); /* its parent got the status first */
    cli_target_end_read(&e);
    cr_expect(!e.known);
    cr_expect(strstr(cli_target_end_describe(&e, buf, sizeof(buf)), "exit status unknown"), "%s", buf);
    close(p[1]);
}

static void *linger(void *arg)
{
    int fd = *(int *)arg;
    char how = 0;
    if (read(fd, &how, 1) != 1)
        _exit(99);
    _exit(how - '0');
}

/* The main thread exits first (pthread_exit): its zombie says 0 whatever
 * the process's status is, so the status is not told. */
Test(cli_target_end, not_told_when_the_main_thread_went_first)
{
    struct cli_target_end e;
    int p[2];
    char buf[128];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        pthread_t t;
        close(p[1]);
        pthread_create(&t, NULL, linger, &p[0]);
        pthread_exit(NULL);
    }
    close(p[0]);
    cli_target_end_watch(&e, pid);
    char path[64], state = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 400 && state != 'Z'; i++) { /* the leader a zombie, the process alive */
        FILE *f = fopen(path, "re");
        if (f) {
            if (fscanf(f, "%*d %*s %c", &state) != 1)
                state = 0;
            fclose(f);
        }
        struct timespec ts = { 0, 5000000L };
        nanosleep(&ts, NULL);
    }
    cr_assert_eq(state, 'Z');
    cli_target_end_check(&e);
    cr_expect(e.leader_died);
    cr_assert_eq(write(p[1], "5", 1), 1);
    wait_zombie(pid);
    cli_target_end_read(&e);
    cr_expect(!e.known, "status told as %d/%d", e.signal, e.exit_code);
    cr_expect(strstr(cli_target_end_describe(&e, buf, sizeof(buf)), "main thread"), "%s", buf);
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 5, "the real status");
    close(p[1]);
}
