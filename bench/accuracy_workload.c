/* accuracy_workload.c - allocations with a known truth per stack.
 *
 * Prints "ready", waits for SIGUSR1 (sent once the profiler is attached),
 * then allocates GIB GiB (argument, default 1) spread over four stacks of
 * different sizes and lifetimes, and prints the truth for each stack as
 *
 *   truth <function> alloc_bytes <n> live_bytes <n>
 *
 * followed by "done". It then waits (blocks stay live) until SIGTERM.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024ull * 1024 * 1024)

struct stack_truth {
    const char *name;
    uint64_t alloc_bytes, live_bytes;
};

static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }

/* Keeps one in `keep_every` blocks live, frees the rest. Each function is a
 * distinct stack with its own size. */
#define DEFINE_ALLOCATOR(fn, size, keep_every)                                   \
    __attribute__((noinline)) static void fn(uint64_t budget, struct stack_truth *t) \
    {                                                                            \
        uint64_t n = budget / (size);                                            \
        for (uint64_t i = 0; i < n; i++) {                                       \
            char *p = malloc(size);                                              \
            if (!p)                                                              \
                abort();                                                         \
            p[0] = 1;                                                            \
            t->alloc_bytes += (size);                                            \
            if (i % (keep_every) == 0)                                           \
                t->live_bytes += (size); /* leaked on purpose: stays live */     \
            else                                                                 \
                free(p);                                                         \
        }                                                                        \
    }

DEFINE_ALLOCATOR(alloc_small_32, 32, 4)
DEFINE_ALLOCATOR(alloc_medium_1k, 1024, 8)
DEFINE_ALLOCATOR(alloc_page_4k, 4096, 2)
DEFINE_ALLOCATOR(alloc_large_256k, 262144, 16)

int main(int argc, char **argv)
{
    uint64_t total = GIB * (uint64_t)(argc > 1 ? strtoull(argv[1], NULL, 10) : 1);
    if (total == 0)
        total = GIB;
    struct stack_truth truth[4] = {
        {"alloc_small_32", 0, 0},
        {"alloc_medium_1k", 0, 0},
        {"alloc_page_4k", 0, 0},
        {"alloc_large_256k", 0, 0},
    };
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    while (!go)
        pause();
    alloc_small_32(total / 4, &truth[0]);
    alloc_medium_1k(total / 4, &truth[1]);
    alloc_page_4k(total / 4, &truth[2]);
    alloc_large_256k(total / 4, &truth[3]);
    for (int i = 0; i < 4; i++)
        printf("truth %s alloc_bytes %llu live_bytes %llu\n", truth[i].name,
               (unsigned long long)truth[i].alloc_bytes, (unsigned long long)truth[i].live_bytes);
    printf("done\n");
    fflush(stdout);
    for (;;)
        pause();
}
