/* payload_tables.c - heapinject's own tables in a process's memory.
 *
 * The payload keeps its tables (buckets, the sampled-address map, stack
 * nodes) in anonymous mappings of its own (payload/arena.c), which smaps
 * shows as the program's mmap. The payload lists them in pl_arena_maps
 * (address and length, pl_arena_nmaps of them), in its .bss; a fork child
 * inherits both the mappings and the list, and has no agent to ask. So
 * the list is read from outside: the symbols from libheapinject.so's
 * file, the values through /proc/PID/mem, the resident pages from
 * /proc/PID/pagemap. */
#include "cli/memory/payload_tables.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/maps_line.h"
#include "cli/process/paths.h"
#include "cli/process/proc.h"
#include "injector/elfsym.h"

#define MAX_TABLES 32 /* PL_ARENA_MAX_MAPS */

struct table_map {
    uint64_t addr, len; /* payload/arena.c's struct pl_arena_map: void *, size_t */
};

/* Resident pages of [lo, hi) from the pagemap (bit 63: present). */
static uint64_t resident(int pagemap, uint64_t lo, uint64_t hi)
{
    uint64_t n = 0, e[512];
    for (uint64_t pg = lo / 4096; pg < (hi + 4095) / 4096;) {
        uint64_t want = (hi + 4095) / 4096 - pg;
        if (want > 512)
            want = 512;
        ssize_t r = pread(pagemap, e, want * 8, (off_t)(pg * 8));
        if (r <= 0 || r % 8)
            break;
        for (ssize_t k = 0; k < r / 8; k++)
            n += e[k] >> 63;
        pg += (uint64_t)r / 8;
    }
    return n * 4096;
}

/* The payload's first mapping (offset 0) in the maps text: its start and
 * path. */
static bool payload_mapping(const char *maps, size_t len, uint64_t *start, char *path, size_t plen)
{
    const char *p = maps, *end = maps + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        struct hi_maps_line l;
        if (hi_maps_line_parse(p, nl, &l) && l.path && l.offset == 0 && l.path[0] == '/' &&
            cli_paths_is_payload(l.path, l.pathlen) && l.pathlen < plen) {
            *start = l.start;
            memcpy(path, l.path, l.pathlen);
            path[l.pathlen] = '\0';
            return true;
        }
        p = nl + 1;
    }
    return false;
}

uint64_t cli_memory_payload_tables(pid_t pid)
{
    size_t len = 0;
    char *maps = cli_proc_maps_text(pid, &len), path[4096], file[4200];
    uint64_t start = 0, total = 0;
    bool found = maps && payload_mapping(maps, len, &start, path, sizeof(path));
    free(maps);
    if (!found)
        return 0;
    snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, path);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct inj_elf *elf = NULL;
    if (fd < 0 || inj_elf_open(fd, &elf) < 0) /* inj_elf_open owns fd */
        return 0;
    uint64_t v_maps, v_n, size, bias;
    bool ok = inj_elf_symbol(elf, "pl_arena_maps", &v_maps, &size) == 0 &&
              inj_elf_symbol(elf, "pl_arena_nmaps", &v_n, &size) == 0 && inj_elf_load_bias(elf, start, 0, &bias) == 0;
    inj_elf_close(elf);
    if (!ok)
        return 0; /* a stripped payload: its tables stay under mmap */
    char mp[64], pp[64];
    snprintf(mp, sizeof(mp), "/proc/%d/mem", (int)pid);
    snprintf(pp, sizeof(pp), "/proc/%d/pagemap", (int)pid);
    int mem = open(mp, O_RDONLY | O_CLOEXEC), pagemap = open(pp, O_RDONLY | O_CLOEXEC);
    unsigned n = 0;
    struct table_map t[MAX_TABLES];
    if (mem >= 0 && pagemap >= 0 && pread(mem, &n, sizeof(n), (off_t)(bias + v_n)) == (ssize_t)sizeof(n) &&
        n <= MAX_TABLES && pread(mem, t, n * sizeof(t[0]), (off_t)(bias + v_maps)) == (ssize_t)(n * sizeof(t[0])))
        for (unsigned i = 0; i < n; i++)
            if (t[i].len && t[i].addr + t[i].len > t[i].addr)
                total += resident(pagemap, t[i].addr, t[i].addr + t[i].len);
    if (mem >= 0)
        close(mem);
    if (pagemap >= 0)
        close(pagemap);
    return total;
}
