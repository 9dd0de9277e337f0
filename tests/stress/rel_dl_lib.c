/* rel_dl_lib.c - a library that rel_busy dlopens and dlcloses in a loop.
 * It allocates through its own GOT slots, which the profiler patches when
 * it finds the new module, and which vanish with the dlclose. */
#include <stdlib.h>

long rel_dl_work(long n)
{
    long sum = 0;
    long **v = malloc((size_t)n * sizeof(*v));
    if (!v)
        return -1;
    for (long i = 0; i < n; i++) {
        v[i] = calloc(1, sizeof(long) * (size_t)(1 + i % 7));
        if (!v[i])
            return -1;
        v[i][0] = i;
    }
    for (long i = 0; i < n; i++) {
        v[i] = realloc(v[i], sizeof(long) * 16);
        sum += v[i][0];
        free(v[i]);
    }
    free(v);
    return sum;
}
