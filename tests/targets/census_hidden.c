/* census_hidden: a block in use whose address the program keeps only as
 * a number no scan recognises (its bits inverted, as a Python int or an
 * xor-linked list keeps one), next to one block held by a plain pointer.
 * Prints "ready" when both are filled; on SIGUSR1 checks both blocks'
 * contents and prints "data ok" or "data BAD". */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HIDDEN_SIZE (96u << 10) /* below the mmap threshold: a block of the heap */
#define PLAIN_SIZE 4096

static uintptr_t g_hidden_inverted; /* ~address: not a pointer to anything */
static unsigned char *g_plain;
static volatile sig_atomic_t check;

static void on_usr1(int sig)
{
    (void)sig;
    check = 1;
}

static int all(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* In a function of its own, so that no register or stack slot of main's
 * keeps the plain address once it returns (the census scans registers and
 * stacks from the stack pointer up). */
static int hide_block(void)
{
    unsigned char *h = malloc(HIDDEN_SIZE);
    if (!h)
        return -1;
    memset(h, 0x5a, HIDDEN_SIZE);
    g_hidden_inverted = ~(uintptr_t)h;
    return 0;
}

int main(void)
{
    g_plain = malloc(PLAIN_SIZE);
    if (!g_plain || hide_block() < 0)
        return 1;
    memset(g_plain, 0x33, PLAIN_SIZE);
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (check) {
            check = 0;
            unsigned char *back = (unsigned char *)~g_hidden_inverted;
            printf("data %s\n", all(back, HIDDEN_SIZE, 0x5a) && all(g_plain, PLAIN_SIZE, 0x33) ? "ok" : "BAD");
            fflush(stdout);
        }
    }
}
