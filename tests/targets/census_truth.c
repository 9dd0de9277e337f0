/* census_truth - a heap whose census is known, built before any attach.
 *
 * - g_list: a global holding a list of 100,000 blocks of 1,000 bytes;
 * - 40,000 blocks of 4,096 bytes whose pointers are dropped (leaked);
 * - 16 threads, each holding 100 blocks of 2,000 bytes only on its stack
 *   (its own arena), then sleeping in nanosleep;
 * - g_big: 4 blocks of 8 MiB held (mmapped chunks), 2 more leaked;
 * - small blocks churned in every thread so tcache and fastbins are full;
 * - g_bss_tail: a 1 MiB zero-initialised array whose last element holds a
 *   block of 1,000 bytes: a global in the part of .bss that the maps show
 *   as anonymous memory after the executable (past the file's last page);
 * - 2,000 blocks of 1,500 bytes held by nothing but a pointer one past
 *   their end (g_past_end: it points at the next chunk's header), so
 *   unreachable; each is followed by a 40-byte block held by g_sep (the
 *   very next chunk: glibc's bins point at a free chunk's header, which is
 *   the last word of the block before it), then by a 3,000-byte block that
 *   is freed: 2,000 free chunks (too large for tcache and fastbins).
 * Every block is filled with a pattern that holds no pointer. Prints the
 * truth (a second line for the blocks past whose end a pointer points and
 * the free chunks between them) and "ready"; on SIGUSR1 checks every held block ("verify ok" or
 * "verify BAD"). */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIST_N 100000
#define LIST_SIZE 1000
#define LEAK_N 40000
#define LEAK_SIZE 4096
#define THREADS 16
#define STACK_N 100
#define STACK_SIZE 2000
#define BIG_SIZE (8u << 20)
#define PAST_N 2000
#define PAST_SIZE 1500
#define HOLE_SIZE 3000
#define SEP_SIZE 40

struct node {
    struct node *next;
    char fill[LIST_SIZE - sizeof(struct node *)];
};

struct node *g_list;
void *g_bss_tail[1 << 17];
void *g_big[4];
char *g_past_end[PAST_N]; /* one past each block's usable end: holds none */
void *g_sep[PAST_N];
void *g_sep_spare[PAST_N]; /* 40-byte blocks that came from a free list, not after their block */
static void *g_hole[PAST_N];
static volatile sig_atomic_t want_verify;
static pthread_barrier_t g_ready;
static pthread_barrier_t g_verify;

static void on_usr1(int sig)
{
    (void)sig;
    want_verify = 1;
}

/* Mallocs and frees small blocks of every fastbin size: 7 per size stay in
 * the tcache, the rest go to the fastbins. */
static void churn(void)
{
    void *p[200];
    for (size_t size = 16; size <= 112; size += 16) {
        for (int i = 0; i < 20; i++)
            p[i] = malloc(size);
        for (int i = 0; i < 20; i++)
            free(p[i]);
    }
}

/* The blocks only a pointer one past their end follows, and the free
 * chunks between them. Their usable size, or 0 when the 40-byte blocks
 * never came right after them. */
__attribute__((noinline)) static size_t make_past_blocks(void)
{
    size_t usable = 0;
    int spare = 0;
    for (int i = 0; i < PAST_N; i++) {
        char *b = malloc(PAST_SIZE);
        usable = malloc_usable_size(b);
        char *sep = malloc(SEP_SIZE);
        /* A thread sharing this arena left small free chunks: the first
         * 40-byte blocks come from them. Kept aside until one follows b. */
        while (sep != b + usable + 8) {
            if (spare == PAST_N)
                return 0;
            g_sep_spare[spare++] = sep;
            sep = malloc(SEP_SIZE);
        }
        memset(b, 'P', usable);
        g_past_end[i] = b + usable;
        g_sep[i] = memset(sep, 'S', SEP_SIZE);
        g_hole[i] = malloc(HOLE_SIZE);
    }
    for (int i = 0; i < PAST_N; i++) {
        free(g_hole[i]);
        g_hole[i] = NULL;
    }
    return usable;
}

/* Clears what the calls above left on the stack below main's frame: the
 * census scans a thread's stack from its stack pointer up, and a stale
 * copy of a block's address there would hold that block. */
__attribute__((noinline)) static void scrub_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof(junk));
}

static int check_stack_blocks(char **held)
{
    for (int i = 0; i < STACK_N; i++)
        for (int k = 0; k < STACK_SIZE; k++)
            if (held[i][k] != (char)('s' + i % 3))
                return -1;
    return 0;
}

static void *thread_main(void *arg)
{
    (void)arg;
    char *held[STACK_N]; /* on this thread's stack only */
    for (int i = 0; i < STACK_N; i++) {
        held[i] = malloc(STACK_SIZE);
        memset(held[i], 's' + i % 3, STACK_SIZE);
    }
    churn();
    pthread_barrier_wait(&g_ready);
    for (;;) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (want_verify) {
            if (check_stack_blocks(held) != 0)
                printf("verify BAD thread block\n");
            pthread_barrier_wait(&g_verify);
            pthread_barrier_wait(&g_verify);
        }
    }
    return NULL;
}

static int verify(void)
{
    size_t n = 0;
    for (struct node *x = g_list; x; x = x->next, n++)
        for (size_t k = 0; k < sizeof(x->fill); k++)
            if (x->fill[k] != 'L')
                return -1;
    if (n != LIST_N)
        return -1;
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < BIG_SIZE; k += 4096)
            if (((char *)g_big[i])[k] != 'B')
                return -1;
    return 0;
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < LIST_N; i++) {
        struct node *x = malloc(sizeof(*x));
        memset(x->fill, 'L', sizeof(x->fill));
        x->next = g_list;
        g_list = x;
        /* interleave the leaked blocks: nothing coalesces when they are lost */
        if (i < LEAK_N) {
            char *leak = malloc(LEAK_SIZE);
            memset(leak, 'X', LEAK_SIZE);
        }
    }
    for (int i = 0; i < 6; i++) {
        char *b = malloc(BIG_SIZE);
        memset(b, 'B', BIG_SIZE);
        if (i < 4)
            g_big[i] = b;
    }
    g_bss_tail[(1 << 17) - 1] = memset(malloc(LIST_SIZE), 'T', LIST_SIZE);
    pthread_barrier_init(&g_ready, NULL, THREADS + 1);
    pthread_barrier_init(&g_verify, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, thread_main, NULL);
    pthread_barrier_wait(&g_ready);
    /* After the threads: none of them takes its first blocks from these
     * free chunks. */
    size_t past_usable = make_past_blocks();
    scrub_stack();
    churn();
    struct mallinfo2 mi = mallinfo2();
    printf("truth list_bytes=%d leak_bytes=%d stack_bytes=%d big_held=%u big_leaked=%u fordblks=%zu\n",
           LIST_N * LIST_SIZE, LEAK_N * LEAK_SIZE, THREADS * STACK_N * STACK_SIZE, 4 * BIG_SIZE, 2 * BIG_SIZE,
           mi.fordblks);
    size_t spares = 0;
    while (spares < PAST_N && g_sep_spare[spares])
        spares++;
    printf("truth past_n=%d past_usable=%zu holes=%d sep_bytes=%zu\n", PAST_N, past_usable, PAST_N,
           (PAST_N + spares) * malloc_usable_size(g_sep[0]));
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL); /* SIGUSR1 may land on any thread: poll the flag */
        if (want_verify) {
            pthread_barrier_wait(&g_verify);
            printf("verify %s\n", verify() == 0 ? "ok" : "BAD");
            fflush(stdout);
            want_verify = 0;
            pthread_barrier_wait(&g_verify);
        }
    }
}
