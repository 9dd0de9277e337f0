/* cli_nextline - a target whose allocation calls return to a different
 * source line than the call's, for tests/e2e/cli_return_line.sh.
 *
 * Every return address on the allocating stack lands on the line after the
 * call: malloc's in alloc_or_die (the next instruction tests the result for
 * the noreturn out-of-memory path), alloc_or_die's in keep_blocks (the next
 * instruction stores the block). A symbolizer that looks up the return
 * address itself, not the call instruction before it, names those next
 * lines. The lines the report must name carry "CALL:" markers that the
 * test finds with grep. Allocates 4 KiB blocks into a ring of 64 (so most
 * are freed) every millisecond; prints "ready". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile ring[64];

__attribute__((noinline, noreturn)) static void fatal_oom(size_t n)
{
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    _exit(1);
}

__attribute__((noinline)) static void *alloc_or_die(size_t n)
{
    void *p = malloc(n); /* CALL:alloc_or_die */
    if (!p)
        fatal_oom(n);
    return p;
}

__attribute__((noinline)) static void keep_blocks(unsigned i)
{
    void *old = ring[i % 64];
    void *p = alloc_or_die(4096); /* CALL:keep_blocks */
    ring[i % 64] = p;
    free(old);
}

int main(void)
{
    struct timespec ms = { 0, 1000000L };

    printf("ready\n");
    fflush(stdout);
    for (unsigned i = 0;; i++) {
        keep_blocks(i); /* CALL:main */
        nanosleep(&ms, NULL);
    }
}
