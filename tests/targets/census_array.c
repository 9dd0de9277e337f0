/* census_array: a global array of 10 pointers, each to a 512 KiB block
 * (g_rows), and one scalar global to a 64 KiB block (g_single). Prints
 * "ready" when filled; on SIGUSR1 checks every block and prints "data ok"
 * or "data BAD". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NROWS 10
#define ROW (512u << 10)
#define SINGLE (64u << 10)

unsigned char *g_rows[NROWS];
unsigned char *g_single;
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

int main(void)
{
    for (int i = 0; i < NROWS; i++) {
        if (!(g_rows[i] = malloc(ROW)))
            return 1;
        memset(g_rows[i], 'a' + i, ROW);
    }
    if (!(g_single = malloc(SINGLE)))
        return 1;
    memset(g_single, 'S', SINGLE);
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (check) {
            int good = all(g_single, SINGLE, 'S');
            for (int i = 0; i < NROWS; i++)
                good &= all(g_rows[i], ROW, (unsigned char)('a' + i));
            check = 0;
            printf("data %s\n", good ? "ok" : "BAD");
            fflush(stdout);
        }
    }
}
