/* rel_bigsnap.c - a target whose snapshot is large and slow to stream:
 * allocations from 2^BITS distinct call stacks about 50 frames deep
 * (rel_bigsnap [BITS], default 12, at most 14) (each
 * kept live, so at --rate 1 every stack is a bucket) and 20000 separate
 * mappings (a long /proc/PID/maps). Lets a test kill something while a
 * snapshot is on the wire. Prints "ready" when the mappings exist and the
 * allocating thread runs; "quit" on stdin ends it (exit 0). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_BITS 14
#define PATHS (1u << MAX_BITS)
#define DEEP 32
#define MAPPINGS 20000

static void *slots[PATHS];
static int bits = 12;
static atomic_int stop;
static volatile uintptr_t sink;

static void rec(int d, unsigned path);

__attribute__((noinline)) static void leaf(int n, unsigned path)
{
    if (n > 0) {
        leaf(n - 1, path);
        sink++;
        return;
    }
    free(slots[path]);
    slots[path] = malloc(16 + path % 64);
    sink += (uintptr_t)slots[path];
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

static void *allocator(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        for (unsigned p = 0; p < (1u << bits) && !atomic_load(&stop); p++)
            rec(0, p);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && atoi(argv[1]) >= 1 && atoi(argv[1]) <= MAX_BITS)
        bits = atoi(argv[1]);
    long page = sysconf(_SC_PAGESIZE);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Alternating protections keep the kernel from merging them. */
    char *area = mmap(NULL, (size_t)page * MAPPINGS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED)
        return 2;
    for (int i = 0; i < MAPPINGS; i += 2)
        mprotect(area + (size_t)i * (size_t)page, (size_t)page, PROT_NONE);
    pthread_t th;
    if (pthread_create(&th, NULL, allocator, NULL))
        return 2;
    printf("ready\n");
    char line[32];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "quit", 4))
            break;
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    for (unsigned p = 0; p < PATHS; p++)
        free(slots[p]);
    printf("done errors=0\n");
    return 0;
}
