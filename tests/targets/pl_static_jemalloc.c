/* pl_static_jemalloc - a C service with jemalloc linked into the executable
 * (libjemalloc.a, unprefixed: the executable defines malloc itself), as
 * C++ services often link tcmalloc or jemalloc. Its own calls to malloc are
 * direct calls: heapinject must refuse it and leave it untouched. Prints
 * "ready", then keeps a growing cache of 4 KiB blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *cache[4096];

static void grow_cache(unsigned i)
{
    free(cache[i % 4096]);
    cache[i % 4096] = malloc(4096);
    if (cache[i % 4096])
        memset(cache[i % 4096], (int)i, 64);
}

int main(void)
{
    puts("ready");
    fflush(stdout);
    for (unsigned i = 0;; i++) {
        grow_cache(i);
        usleep(1000);
    }
}
