/* hostile_lib.c - the library the hostile-peer tests load into a python
 * target under a hostile name, or with a debug link naming a FIFO
 * (lib.sh: build_hostile_lib, start_hostile_lib_target). */
#include <stdlib.h>
#include <string.h>

/* Most of the target's time is spent here, so that the injector finds the
 * thread stopped inside this library and unwinds through its file. */
void hostile_spin(void)
{
    for (volatile unsigned long i = 0; i < 20000000ul; i++)
        ;
}

__attribute__((noinline)) void *hostile_keep(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}
