/* census_shared: buffers that two roots reach, and a list only one does.
 * 100 buffers of 8 KiB are held by a runtime-like heap (an anonymous
 * mapping of pointers, as V8's pages hold node's Buffers) and, through a
 * descriptor block, by the global g_descriptor, which the census marks
 * first; 200 blocks of 1 KiB hang off g_own_list alone. Prints "ready";
 * on SIGUSR1 checks every block and prints "data ok" or "data BAD". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBUF 100
#define BUF (8u << 10)
#define NOWN 200

struct node {
    struct node *next;
    unsigned char data[1024 - sizeof(void *)];
};

struct descriptor {
    unsigned char *bufs[NBUF];
};

struct descriptor *g_descriptor;
struct node *g_own_list;
static unsigned char **runtime_heap; /* mmap'ed: a mapping root */
static volatile sig_atomic_t check;

static void on_usr1(int sig)
{
    (void)sig;
    check = 1;
}

static int verify(void)
{
    int good = 1;
    for (int i = 0; i < NBUF; i++) {
        good &= runtime_heap[i] == g_descriptor->bufs[i];
        for (size_t k = 0; k < BUF; k++)
            good &= runtime_heap[i][k] == (unsigned char)i;
    }
    int n = 0;
    for (struct node *p = g_own_list; p; p = p->next, n++)
        for (size_t k = 0; k < sizeof(p->data); k++)
            good &= p->data[k] == (unsigned char)(n + 7);
    return good && n == NOWN;
}

int main(void)
{
    runtime_heap = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (runtime_heap == MAP_FAILED || !(g_descriptor = calloc(1, sizeof(*g_descriptor))))
        return 1;
    for (int i = 0; i < NBUF; i++) {
        if (!(runtime_heap[i] = malloc(BUF)))
            return 1;
        memset(runtime_heap[i], i, BUF);
        g_descriptor->bufs[i] = runtime_heap[i];
    }
    struct node **tail = &g_own_list;
    for (int n = 0; n < NOWN; n++) {
        struct node *p = malloc(sizeof(*p));
        if (!p)
            return 1;
        p->next = NULL;
        memset(p->data, n + 7, sizeof(p->data));
        *tail = p;
        tail = &p->next;
    }
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (check) {
            check = 0;
            printf("data %s\n", verify() ? "ok" : "BAD");
            fflush(stdout);
        }
    }
}
