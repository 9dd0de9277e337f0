/* mem_truth - a process whose memory is known: --inuse MiB of 64 KiB heap
 * blocks held, --freed MiB of 64 KiB blocks freed but kept by the allocator,
 * --mmap MiB of direct anonymous mmap, all touched. --layout interleaved
 * (default) alternates held and freed blocks, so nothing coalesces and
 * nothing can be trimmed from the top; --layout middle frees one run of
 * blocks between two held runs (malloc_trim(0) can give it back, free()
 * alone cannot). --reserved MiB reserves twice that address space
 * PROT_NONE and commits MiB of it in 2 MiB pieces, each behind a 4 KiB
 * guard, all touched: an allocator that reserves and commits, as
 * Chromium's PartitionAlloc does (its super pages look like thread stacks
 * above guard pages in the maps). --spinner starts a thread that touches
 * 2 MiB of its own stack and then runs without a system call, so
 * /proc/TID/syscall gives no stack pointer for it. --big MiB holds that
 * many 1 MiB blocks, each one glibc mmaps on its own, all written. Prints "ready" once set
 * up; on SIGUSR1 checks every held block's contents and prints "verify ok
 * N" or "verify BAD i". */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLOCK (64u * 1024u - 64u) /* below glibc's 128 KiB mmap threshold */

static volatile sig_atomic_t want_verify;

static void on_usr1(int sig)
{
    (void)sig;
    want_verify = 1;
}

static volatile sig_atomic_t spinner_ready;

/* Touches 2 MiB of this thread's stack (the default stack is 8 MiB), then
 * spins without a system call. */
static void *spinner(void *arg)
{
    (void)arg;
    volatile unsigned char deep[2u << 20];
    for (size_t i = 0; i < sizeof(deep); i += 4096)
        deep[i] = 1;
    spinner_ready = 1;
    for (;;)
        __asm__ volatile("pause" ::: "memory");
    return NULL;
}

/* MiB committed in 2 MiB pieces, each behind a 4 KiB guard, inside a
 * reservation of twice that. 0 or -1. */
static int reserve_and_commit(size_t mib)
{
    size_t piece = 2u << 20, guard = 4096, n = mib / 2, span = piece + guard;
    unsigned char *r = mmap(NULL, 2 * n * span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char *p = r + 2 * i * span + guard;
        if (mprotect(p, piece, PROT_READ | PROT_WRITE))
            return -1;
        memset(p, 0x3c, piece);
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t inuse = 150, freed = 150, mapped = 64, reserved = 0, big = 0;
    int spin = 0;
    const char *layout = "interleaved";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--inuse"))
            inuse = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--freed"))
            freed = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--mmap"))
            mapped = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--layout"))
            layout = argv[i + 1];
        else if (!strcmp(argv[i], "--reserved"))
            reserved = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--big"))
            big = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--spinner"))
            spin = atoi(argv[i + 1]);
    }
    size_t nin = inuse * 1048576 / BLOCK, nfr = freed * 1048576 / BLOCK, n = nin + nfr;
    unsigned char **b = calloc(n, sizeof(*b));
    char *held = calloc(n, 1);
    if (!b || !held)
        return 1;
    if (!strcmp(layout, "middle")) {
        for (size_t i = 0; i < n; i++)
            held[i] = i < nin / 2 || i >= nin / 2 + nfr;
    } else {
        /* Spread nfr freed blocks evenly among n. */
        for (size_t i = 0, f = 0; i < n; i++) {
            int fr = f < nfr && (i + 1) * nfr / n > f;
            held[i] = !fr;
            f += fr;
        }
    }
    for (size_t i = 0; i < n; i++) {
        b[i] = malloc(BLOCK);
        if (!b[i])
            return 1;
        memset(b[i], (int)(i * 7 + 1), BLOCK);
    }
    for (size_t i = 0; i < n; i++)
        if (!held[i]) {
            free(b[i]);
            b[i] = NULL;
        }
    unsigned char **bigb = calloc(big + 1, sizeof(*bigb));
    if (!bigb)
        return 1;
    for (size_t i = 0; i < big; i++) {
        bigb[i] = malloc(1u << 20);
        if (!bigb[i])
            return 1;
        memset(bigb[i], (int)(i * 13 + 5), 1u << 20);
    }
    if (mapped) {
        void *m = mmap(NULL, mapped << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        memset(m, 0x5a, mapped << 20);
    }
    if (reserved && reserve_and_commit(reserved) < 0)
        return 1;
    if (spin) {
        pthread_t t;
        if (pthread_create(&t, NULL, spinner, NULL))
            return 1;
        while (!spinner_ready)
            usleep(1000);
    }
    signal(SIGUSR1, on_usr1);
    printf("ready inuse=%zu freed=%zu mmap=%zu reserved=%zu blocks=%zu big=%zu\n", inuse, freed, mapped,
           reserved, n, big);
    fflush(stdout);
    for (;;) {
        usleep(20000);
        if (!want_verify)
            continue;
        want_verify = 0;
        size_t bad = (size_t)-1, count = 0;
        for (size_t i = 0; i < n && bad == (size_t)-1; i++) {
            if (!b[i])
                continue;
            count++;
            for (size_t k = 0; k < BLOCK; k += 512)
                if (b[i][k] != (unsigned char)(i * 7 + 1)) {
                    bad = i;
                    break;
                }
        }
        for (size_t i = 0; i < big && bad == (size_t)-1; i++) {
            count++;
            for (size_t k = 0; k < (1u << 20); k += 512)
                if (bigb[i][k] != (unsigned char)(i * 13 + 5)) {
                    bad = n + i;
                    break;
                }
        }
        /* Allocating after a trim must work too. */
        void *p = malloc(1 << 20);
        memset(p, 1, 1 << 20);
        free(p);
        if (bad == (size_t)-1)
            printf("verify ok %zu\n", count);
        else
            printf("verify BAD %zu\n", bad);
        fflush(stdout);
    }
}
