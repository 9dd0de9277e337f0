/* cli_churn_all - allocates and at once frees blocks of uneven sizes (1 to
 * 3000 bytes, so that an allocator's size classes round most of them up),
 * through malloc, calloc and realloc, one block at a time: everything it
 * allocates it frees. For tests/e2e/cli_exact_allocators.sh, run under a
 * preloaded tcmalloc or mimalloc: the exact freed bytes must not exceed the
 * exact allocated ones (issue 16). Prints "ready"; runs until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
    unsigned x = 12345;
    printf("ready\n");
    fflush(stdout);
    for (unsigned long i = 0;; i++) {
        x = x * 1103515245u + 12345u;
        size_t n = 1 + (x >> 8) % 3000;
        char *p = (i & 1) ? malloc(n) : calloc(1, n);
        if (!p)
            return 1;
        p[0] = 1;
        if (i % 3 == 0) {
            char *q = realloc(p, n / 2 + 1);
            if (!q)
                return 1;
            p = q;
        }
        free(p);
        if (i % 256 == 0) {
            struct timespec ts = { 0, 200 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
}
