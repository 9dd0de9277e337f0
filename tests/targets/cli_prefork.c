/* cli_prefork: a pre-fork server in miniature. The parent forks
 * NCHILDREN workers and then sits idle in pause(), allocating nothing;
 * each worker keeps 4 MiB of blocks live and replaces some every few
 * milliseconds, checking each block's pattern before freeing it.
 * Prints "child PID" per worker and "ready" when all hold their blocks;
 * a worker that finds a block changed prints "BAD" and exits 1. The
 * workers die with the parent (PR_SET_PDEATHSIG). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NCHILDREN 3
#define NBLOCKS 1024
#define BLOCK 4096

static void check_and_fill(unsigned char *b, unsigned char old, unsigned char now)
{
    for (size_t i = 0; i < BLOCK; i++)
        if (b[i] != old) {
            printf("BAD pid %d byte %zu\n", (int)getpid(), i);
            fflush(stdout);
            _exit(1);
        }
    memset(b, now, BLOCK);
}

static void worker(int ready_fd)
{
    static unsigned char *blocks[NBLOCKS];
    static unsigned char tag[NBLOCKS];
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (size_t i = 0; i < NBLOCKS; i++) {
        if (!(blocks[i] = malloc(BLOCK)))
            _exit(2);
        tag[i] = (unsigned char)i;
        memset(blocks[i], tag[i], BLOCK);
    }
    if (write(ready_fd, "r", 1) != 1)
        _exit(2);
    close(ready_fd);
    for (unsigned round = 0;; round++) {
        for (size_t k = 0; k < 16; k++) {
            size_t i = (round * 16 + k) % NBLOCKS;
            check_and_fill(blocks[i], tag[i], tag[i]);
            free(blocks[i]);
            if (!(blocks[i] = malloc(BLOCK)))
                _exit(2);
            tag[i] = (unsigned char)(tag[i] + 1);
            memset(blocks[i], tag[i], BLOCK);
        }
        usleep(2000);
    }
}

int main(void)
{
    int fds[2];
    if (pipe(fds))
        return 1;
    for (int i = 0; i < NCHILDREN; i++) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            close(fds[0]);
            worker(fds[1]);
        }
        printf("child %d\n", (int)c);
    }
    close(fds[1]);
    char r;
    for (int i = 0; i < NCHILDREN; i++)
        if (read(fds[0], &r, 1) != 1)
            return 1;
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
