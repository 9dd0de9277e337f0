/* census_sparse - memory that is mapped but was never touched, for the
 * census: a 64 GiB MAP_NORESERVE anonymous mapping with one page written
 * in its middle, holding the only pointer to a block of 1,000 bytes; a
 * 256 MiB zero-initialised array in .bss whose last element holds the
 * only pointer to another; a static (unexported) global holding a third,
 * which a stripped copy has no name for; a 512 MiB anonymous mapping
 * written whole, whose last word holds the only pointer to a block of
 * 2,000 bytes (dense memory: every page read, one run of pages at a
 * time); 10 blocks of 100 bytes leaked. Prints
 * "ready mapping=ADDR" and waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SPARSE_GIB 64ul
static void *volatile s_hidden_holder;
void *g_sparse_bss[(256u << 20) / sizeof(void *)];

int main(void)
{
    size_t len = SPARSE_GIB << 30;
    char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 1;
    void **mid = (void **)(r + len / 2);
    *mid = memset(malloc(1000), 'S', 1000);
    g_sparse_bss[sizeof(g_sparse_bss) / sizeof(g_sparse_bss[0]) - 1] = memset(malloc(1000), 'B', 1000);
    s_hidden_holder = memset(malloc(3000), 'H', 3000);
    size_t dlen = 512u << 20;
    unsigned char *dense = mmap(NULL, dlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (dense == MAP_FAILED)
        return 1;
    memset(dense, 0x11, dlen);
    ((void **)(dense + dlen))[-1] = memset(malloc(2000), 'D', 2000);
    for (int i = 0; i < 10; i++)
        memset(malloc(100), 'x', 100);
    printf("ready mapping=%p\n", (void *)r);
    fflush(stdout);
    for (;;)
        pause();
}
