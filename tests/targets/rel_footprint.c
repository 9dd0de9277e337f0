/* rel_footprint.c - a target for measuring what a session leaves behind.
 *
 * "run" on stdin allocates one block from each of 2^BITS distinct call
 * stacks (rel_footprint [BITS], default 16: 65,536 stacks, about 40 frames
 * deep), fills each with a pattern, checks every pattern, frees them all
 * and prints "ran N errors=E". So at --rate 1 one run makes 2^BITS buckets,
 * and the program's own heap is the same after every run: a test can run
 * it once before attach (the heap reaches its size), measure, attach, run
 * it again under the hooks, detach and measure again. "quit" ends it with "done errors=E" (all runs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BITS 16
#define PATHS (1u << MAX_BITS)
#define DEEP 20

static unsigned char *slots[PATHS];
static int bits = 16;
static volatile uintptr_t sink;

static void rec(int d, unsigned path);

static size_t block_size(unsigned path)
{
    return 16 + path % 64;
}

__attribute__((noinline)) static void leaf(int n, unsigned path)
{
    if (n > 0) {
        leaf(n - 1, path);
        sink++;
        return;
    }
    slots[path] = malloc(block_size(path));
    if (slots[path])
        memset(slots[path], (int)(path & 0xff), block_size(path));
}

__attribute__((noinline)) static void fa(int d, unsigned path)
{
    rec(d, path);
    sink++;
}

__attribute__((noinline)) static void fb(int d, unsigned path)
{
    rec(d, path);
    sink--;
}

/* One branch per bit of path: every path is its own call stack. */
__attribute__((noinline)) static void rec(int d, unsigned path)
{
    if (d == bits)
        leaf(DEEP, path);
    else if ((path >> d) & 1)
        fa(d + 1, path);
    else
        fb(d + 1, path);
    sink ^= (uintptr_t)d;
}

static unsigned long run_once(void)
{
    unsigned long errors = 0;
    unsigned paths = 1u << bits;
    for (unsigned p = 0; p < paths; p++)
        rec(0, p);
    for (unsigned p = 0; p < paths; p++) {
        if (!slots[p]) {
            errors++;
            continue;
        }
        for (size_t i = 0; i < block_size(p); i++)
            if (slots[p][i] != (unsigned char)(p & 0xff)) {
                errors++;
                break;
            }
        free(slots[p]);
        slots[p] = NULL;
    }
    return errors;
}

int main(int argc, char **argv)
{
    if (argc > 1 && atoi(argv[1]) >= 1 && atoi(argv[1]) <= MAX_BITS)
        bits = atoi(argv[1]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    char line[32];
    unsigned runs = 0;
    unsigned long all_errors = 0;
    while (fgets(line, sizeof(line), stdin)) {
        if (!strncmp(line, "quit", 4))
            break;
        if (!strncmp(line, "run", 3)) {
            unsigned long errors = run_once();
            all_errors += errors;
            printf("ran %u errors=%lu\n", ++runs, errors);
        }
    }
    printf("done errors=%lu\n", all_errors);
    return 0;
}
