/* census_exec - a process that execs itself while a census runs
 * (census_exec.sh, issue 25 item 9a).
 *
 * census_exec N      N small blocks on a linked list (a heap that takes
 *                    the census a while to walk), each holding its index
 *                    and a checksum. Prints "ready"; on SIGUSR1 checks
 *                    every block, prints "before exec ok" (or "... BAD"),
 *                    and execs itself as "census_exec after".
 * census_exec after  the new program: allocates a block, checks it, prints
 *                    "after exec ok" and sleeps until killed. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
    struct node *next;
    uint64_t index;
    uint64_t check;
};

static volatile sig_atomic_t g_go;

static void on_usr1(int sig)
{
    (void)sig;
    g_go = 1;
}

static uint64_t check_of(uint64_t i) { return i * 0x9e3779b97f4a7c15ull ^ 0x5bd1e995u; }

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "after")) {
        uint64_t *b = malloc(4096);
        for (int i = 0; i < 512; i++)
            b[i] = check_of((uint64_t)i);
        int bad = 0;
        for (int i = 0; i < 512; i++)
            bad += b[i] != check_of((uint64_t)i);
        printf("after exec %s\n", bad ? "BAD" : "ok");
        for (;;)
            pause();
    }
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct node *head = NULL;
    for (long i = 0; i < n; i++) {
        struct node *x = malloc(sizeof(*x));
        if (!x)
            return 1;
        x->index = (uint64_t)i;
        x->check = check_of((uint64_t)i);
        x->next = head;
        head = x;
    }
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    while (!g_go)
        pause();
    long seen = 0, bad = 0;
    for (struct node *x = head; x; x = x->next, seen++)
        bad += x->check != check_of(x->index);
    printf("before exec %s (%ld blocks, %ld bad)\n", bad || seen != n ? "BAD" : "ok", seen, bad);
    char self[64];
    snprintf(self, sizeof(self), "/proc/%d/exe", (int)getpid());
    execl(self, "census_exec", "after", (char *)NULL);
    perror("census_exec: exec");
    return 1;
}
