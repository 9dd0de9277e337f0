/* census_corrupt - a [heap] whose chunks do not chain: the size field of an
 * in-use block's chunk is overwritten, so a walk from the heap's start
 * lands inside that block. Every census copy of it fails the same way
 * (the census retries a copy that does not walk, since one caught in the
 * middle of a malloc does not either). Nothing of this process calls
 * malloc or free afterwards. Writes "ready" and waits. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    char *a = malloc(100), *b = malloc(100), *c = malloc(100);
    if (!a || !b || !c)
        return 1;
    memset(a, 'a', 100);
    memset(b, 'x', 100);
    memset(c, 'c', 100);
    ((size_t *)b)[-1] = 0x21; /* 32 bytes: the next "chunk" is b's own 'x' bytes */
    if (write(1, "ready\n", 6) != 6)
        return 1;
    for (;;)
        pause();
}
