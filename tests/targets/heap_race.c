/* heap_race - a heap read from outside while it runs, for the heap check
 * before attach (cli/census/heap_sanity.c, tests/unit/cli_census_heap_sanity.c).
 *
 *   heap_race churn       frees and mallocs blocks of every tcache size
 *                         without a pause, writing each new block's first
 *                         word (where a free chunk's tcache link lives):
 *                         a healthy heap whose lists change under a reader.
 *   heap_race tcache-bad  a latent corruption: two 944-byte blocks freed
 *                         (the tcache of 960-byte chunks holds a -> b), then
 *                         a's link overwritten with a misaligned pointer, as
 *                         a use after free would. It then churns other sizes
 *                         only: glibc would abort it at the second malloc of
 *                         937..952 bytes, which it never makes.
 *
 * Prints "ready" on stdout once its heap is as said, and runs until killed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 64

static void *volatile ring[RING];

/* One free and one malloc of a size of the given tcache bin range. */
static void churn_one(unsigned i, unsigned lo_bin, unsigned bins, unsigned skip_bin)
{
    unsigned bin = lo_bin + (i * 2654435761u >> 8) % bins;
    if (bin == skip_bin)
        bin++;
    size_t n = 24 + 16 * (size_t)bin; /* the largest request of chunk size 32 + 16 * bin */
    unsigned k = i % RING;
    free(ring[k]);
    char *p = malloc(n);
    if (p)
        memset(p, (int)(i & 0x7f) | 1, 8); /* the first word, a free chunk's link */
    ring[k] = p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "churn")) {
        printf("ready\n");
        for (unsigned i = 0;; i++)
            churn_one(i, 0, 64, 64);
    }
    if (!strcmp(mode, "tcache-bad")) {
        char *a = malloc(944), *b = malloc(944);
        ring[0] = a; /* seen: the compiler would drop a malloc nobody uses */
        ring[1] = b;
        ring[0] = ring[1] = NULL;
        char *volatile freed = a; /* the use after free is the point */
        free(b);
        free(a);
        a = freed;
        /* a's link now leads 8 bytes past b, safe-linked (glibc >= 2.32:
         * the pointer xor the link's address >> 12) or not */
        uint64_t link;
        memcpy(&link, a, sizeof(link));
        link ^= 8;
        memcpy(a, &link, sizeof(link));
        printf("ready\n");
        for (unsigned i = 0;; i++)
            churn_one(i, 0, 50, 58); /* bins 0..50: never 58's 937..952 bytes */
    }
    fprintf(stderr, "usage: heap_race churn|tcache-bad\n");
    return 2;
}
