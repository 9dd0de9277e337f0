/* census_merged.c - live blocks held only by memory that the kernel shows
 * as one line with a library's .bss.
 *
 * The kernel merges adjacent anonymous mappings: memory a program maps
 * right after a library's .bss (as python3's arenas came to lie behind
 * libunwind's) reads as one mapping in /proc/self/maps. This program maps
 * a region directly after libc's .bss (MAP_FIXED_NOREPLACE into the gap
 * there), keeps the only pointers to BLOCKS blocks of 1000 bytes in it,
 * and prints "ready merged=1" when the two are one line of the maps
 * ("merged=0" when there was no gap: the test then has nothing to check).
 * A census must find every block reachable. Runs until killed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLOCKS 2000

int main(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t libc_rw_end = 0, bss_end = 0, next_lo = 0;
    int after = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
            continue;
        if (after == 2) {
            next_lo = lo;
            break;
        }
        if (strstr(line, "/libc.so") && !strcmp(perms, "rw-p")) {
            libc_rw_end = hi;
            after = 1;
        } else if (after == 1) {
            /* libc's .bss beyond its file: an anonymous line right after */
            if (lo == libc_rw_end && !strcmp(perms, "rw-p") && !strchr(line, '/'))
                bss_end = hi;
            else
                bss_end = libc_rw_end;
            after = 2;
            if (lo != libc_rw_end)
                next_lo = lo;
            if (next_lo)
                break;
        }
    }
    if (f)
        fclose(f);
    size_t len = (size_t)BLOCKS * sizeof(void *);
    len = (len + 4095) & ~(size_t)4095;
    void **region = MAP_FAILED;
    int merged = 0;
    if (bss_end && next_lo && next_lo - bss_end >= len)
        region = mmap((void *)bss_end, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (region == MAP_FAILED) {
        region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED)
            return 2;
    } else {
        merged = 1;
    }
    for (int i = 0; i < BLOCKS; i++) {
        region[i] = malloc(1000);
        memset(region[i], 0x5a, 1000);
    }
    printf("ready merged=%d region=%p\n", merged, (void *)region);
    fflush(stdout);
    for (;;)
        pause();
}
