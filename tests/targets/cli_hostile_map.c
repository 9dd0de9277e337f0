/* cli_hostile_map - a process that maps files whose names its user chose
 * to be hostile (terminal escapes, a newline), for cli_hostile_heapfmt.sh
 * (issue 25 item 9d: names in --format heap).
 *
 * cli_hostile_map PATH...  writes a page of a pattern to each PATH and
 *                          keeps it mapped; allocates checked blocks all
 *                          the time. Prints "ready"; on SIGUSR1 checks the
 *                          mappings and the blocks: "verify ok" or
 *                          "verify BAD N". */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXMAPS 8
#define SLOTS 512

static volatile sig_atomic_t g_verify;

static void on_usr1(int sig)
{
    (void)sig;
    g_verify = 1;
}

static __attribute__((noinline)) uint64_t *hostile_alloc(unsigned i)
{
    uint64_t *b = malloc(256);
    for (int w = 0; w < 32; w++)
        b[w] = (uint64_t)i * 31 + (uint64_t)w;
    return b;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const uint64_t *maps[MAXMAPS];
    int nmaps = 0;
    for (int a = 1; a < argc && nmaps < MAXMAPS; a++) {
        uint64_t page[512];
        for (int w = 0; w < 512; w++)
            page[w] = (uint64_t)a << 32 | (uint64_t)w;
        int fd = open(argv[a], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
            perror(argv[a]);
            return 1;
        }
        maps[nmaps++] = mmap(NULL, sizeof(page), PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
    }
    uint64_t *slot[SLOTS] = { 0 };
    unsigned idx[SLOTS] = { 0 };
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    long bad = 0;
    for (unsigned n = 0;; n++) {
        unsigned s = n % SLOTS;
        if (slot[s]) {
            for (int w = 0; w < 32; w++)
                bad += slot[s][w] != (uint64_t)idx[s] * 31 + (uint64_t)w;
            free(slot[s]);
        }
        slot[s] = hostile_alloc(n);
        idx[s] = n;
        if (s == 0)
            usleep(1000);
        if (g_verify) {
            g_verify = 0;
            for (int m = 0; m < nmaps; m++)
                for (int w = 0; w < 512; w++)
                    bad += maps[m][w] != ((uint64_t)(m + 1) << 32 | (uint64_t)w);
            if (bad)
                printf("verify BAD %ld\n", bad);
            else
                printf("verify ok\n");
        }
    }
}
