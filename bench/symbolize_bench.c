/* symbolize_bench.c - how fast the cli symbolizes 100,000 distinct PCs.
 *
 * Uses the cli's own symbolizer (cli/symbolize/symbolize.c) on this process: N
 * distinct program counters spread over the executable mapping of libc
 * (a large module; with libc6-dbg its DWARF comes from a separate debug file
 * found by build id, the common case on a distribution). Prints one line:
 *
 *   N distinct PCs in S s (R PCs/s); K with a function, L with file:line
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/profile/profile.h"
#include "cli/symbolize/symbolize.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_maps(size_t *len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    size_t npcs = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 100000;
    struct cli_profile p;
    memset(&p, 0, sizeof(p));
    p.pid = getpid();
    p.maps = read_maps(&p.maps_len);
    if (!p.maps) {
        perror("symbolize_bench: /proc/self/maps");
        return 1;
    }

    /* libc's executable mapping */
    uint64_t lo = 0, hi = 0;
    for (char *line = p.maps; line && *line;) {
        char *nl = strchr(line, '\n');
        unsigned long long a, b;
        char perms[5];
        if (nl)
            *nl = '\0'; /* look at this line only (restored below) */
        int is_libc = sscanf(line, "%llx-%llx %4s", &a, &b, perms) == 3 && perms[2] == 'x' && strstr(line, "/libc.so");
        if (nl)
            *nl = '\n';
        if (is_libc) {
            lo = a;
            hi = b;
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!hi) {
        fprintf(stderr, "symbolize_bench: no executable libc mapping found\n");
        return 1;
    }
    uint64_t step = (hi - lo) / npcs;
    if (step == 0)
        step = 1;

    p.nstacks = npcs;
    p.stacks = calloc(npcs, sizeof(*p.stacks));
    for (size_t i = 0; i < npcs; i++) {
        p.stacks[i].npcs = 1;
        p.stacks[i].pcs = malloc(sizeof(uint64_t));
        p.stacks[i].pcs[0] = lo + 1 + i * step; /* +1: PCs are return addresses */
    }

    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    if (!s) {
        perror("symbolize_bench: cli_symbolizer_new");
        return 1;
    }
    double t0 = now_s();
    int rc = cli_symbolizer_run(s, &p);
    double dt = now_s() - t0;
    if (rc < 0) {
        fprintf(stderr, "symbolize_bench: symbolization failed: %s\n", strerror(-rc));
        return 1;
    }
    size_t with_fn = 0, with_line = 0;
    for (size_t i = 0; i < npcs; i++) {
        const struct cli_stack *st = &p.stacks[i];
        if (st->nframes && st->frames[st->nframes - 1].function)
            with_fn++;
        if (st->nframes && st->frames[0].file && st->frames[0].line)
            with_line++;
    }
    printf("%zu distinct PCs in libc in %.3f s (%.0f PCs/s); %zu with a function, %zu with file:line\n", npcs, dt,
           (double)npcs / dt, with_fn, with_line);
    cli_symbolizer_free(s);
    cli_profile_free(&p);
    return 0;
}
