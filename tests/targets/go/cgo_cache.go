// cgo_cache: a Go program whose C part keeps a growing cache through
// malloc (seen by heapinject) while its Go part allocates slices from the
// Go runtime's own heap (not seen). Prints "ready" once running.
package main

/*
#include <stdlib.h>
#include <string.h>

// Not static: the compiler must keep every malloc.
void *volatile c_kept[1 << 16];
unsigned c_count;

__attribute__((noinline)) void c_cache_grow(void)
{
    void *p = malloc(4096);
    if (p)
        memset(p, 1, 64);
    c_kept[c_count++ & 0xffff] = p;
}
*/
import "C"

import (
	"fmt"
	"os"
	"time"
)

var goCache [][]byte

func main() {
	fmt.Println("ready")
	os.Stdout.Sync()
	for {
		C.c_cache_grow()
		goCache = append(goCache, make([]byte, 4096))
		if len(goCache) > 4096 {
			goCache = goCache[:0]
		}
		time.Sleep(200 * time.Microsecond)
	}
}
