/* rel_heap_cycle.c - a program with a latent heap corruption it never
 * touches again (issue 25, item 8): a fastbin whose list loops.
 *
 * The tcache of 32-byte chunks is filled first (7 frees), so the next
 * frees of that size go to main_arena's fastbin; then free(a), free(b),
 * free(a): glibc checks only that a is not the fastbin's top, so the list
 * becomes a -> b -> a -> ... Alone the program lives for ever: it never
 * allocates or frees again. Any malloc of up to 24 bytes in this process
 * (a dlopen's) empties the tcache and then takes from that fastbin.
 *
 * Prints "ready" (after the corruption is in place), then on stdin:
 *   status  "status rounds=N errors=E": its 64 blocks, made before the
 *           corruption, checked against their patterns
 *   quit    "done rounds=N errors=E", exit 0 when E is 0
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCKS 64
#define BLOCK_SIZE 200

static unsigned char *blocks[BLOCKS];
static unsigned long rounds, errors;

static void check(void)
{
    for (int i = 0; i < BLOCKS; i++)
        for (int j = 0; j < BLOCK_SIZE; j++)
            if (blocks[i][j] != (unsigned char)(i * 7 + j))
                errors++;
    rounds++;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("starting\n"); /* stdout's buffer exists before the corruption */
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(BLOCK_SIZE);
        for (int j = 0; j < BLOCK_SIZE; j++)
            blocks[i][j] = (unsigned char)(i * 7 + j);
    }
    void *small[9];
    for (int i = 0; i < 9; i++)
        small[i] = malloc(24);
    for (int i = 0; i < 7; i++)
        free(small[i]);          /* the tcache of 32-byte chunks is full */
    void *volatile a = small[7]; /* volatile: the double free is meant */
    void *b = small[8];
    free(a);
    free(b);
    free(a);                     /* the fastbin now loops: a -> b -> a */
    printf("ready\n");
    char line[64];
    size_t have = 0;
    for (;;) {
        check();
        struct pollfd p = { 0, POLLIN, 0 };
        if (poll(&p, 1, 5) <= 0)
            continue;
        ssize_t r = read(0, line + have, sizeof(line) - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        line[have] = '\0';
        char *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            if (!strcmp(line, "status"))
                printf("status rounds=%lu errors=%lu\n", rounds, errors);
            else if (!strcmp(line, "quit")) {
                printf("done rounds=%lu errors=%lu\n", rounds, errors);
                _exit(errors ? 1 : 0);
            }
            have -= (size_t)(nl + 1 - line);
            memmove(line, nl + 1, have + 1);
        }
        if (have >= sizeof(line) - 1)
            have = 0;
    }
    _exit(errors ? 1 : 0);
}
