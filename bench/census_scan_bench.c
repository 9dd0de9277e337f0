/* census_scan_bench - the census's mark (pl_census_mark, payload/census/
 * mark.c) alone, on a heap made up in this process's memory, timed in
 * CPU time and counted in user-space instructions (perf_event_open; -1
 * when the kernel refuses it). No fork, no walk, no attach: the figure is
 * the scan's own, stable on a loaded machine, and the same file builds
 * against an older payload to compare.
 *
 *   census_scan_bench [--mib N] [--kind pointers|mixed] [--rounds R]
 *
 * pointers: blocks of 4,096 bytes (chunks of 4,112), every other one held
 *   on a list from a global word, every word of a block's fill an address
 *   inside a held block made before it (bench/census_workload --pointers:
 *   the worst case, each word looked up).
 * mixed: blocks of 32 to 1,024 bytes, words of text, small integers,
 *   zeros, doubles and one in eight a pointer into a held block (a heap
 *   of strings and records); every other block held on a list.
 *
 * Prints one line per round and a last line (the median round), which
 * bench/run.py reads:
 *   scan kind=K mib=M words_scanned=W cpu_ms=C gib_s=G scanned_gib_s=S
 *        instr_per_word=I unreachable=U in_use=N roots=R retained=B
 * gib_s: the heap's bytes (as the census's scan_ms rate counts them) per
 * CPU second; scanned_gib_s: the bytes of the blocks reached, which the
 * mark reads word by word; instr_per_word: per word of those; the
 * figures (blocks unreachable and in use, roots kept, their retained
 * bytes summed) to compare builds by. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "payload/census/heap.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 17;
}

struct heap {
    uint8_t *base;
    uint64_t bytes;
    struct pl_blk *blk;
    uint64_t nblk;
    uintptr_t *held;
    uint64_t nheld;
    uint64_t scanned; /* bytes of held blocks: what the mark reads */
};

/* An address inside a held block: anywhere in a block of 4,104 usable
 * bytes (pointers), in the first 24 bytes, which every block has (mixed). */
static uintptr_t some_held(const struct heap *h, int mixed)
{
    uintptr_t b = h->held[next() % h->nheld];
    return b + (mixed ? (next() % 3) * 8 : next() & 4088u);
}

static void fill_word(struct heap *h, uintptr_t *w, int mixed)
{
    if (!h->nheld) {
        *w = 0x7777777777777777ull;
        return;
    }
    if (!mixed) {
        *w = some_held(h, 0);
        return;
    }
    uint64_t r = next() % 100;
    if (r < 40)
        memcpy(w, "a string", 8);
    else if (r < 65)
        *w = next() % 100000;
    else if (r < 80)
        *w = 0;
    else if (r < 88) {
        double d = (double)(next() % 1000) / 7.0;
        memcpy(w, &d, 8);
    } else
        *w = some_held(h, 1);
}

static int make_heap(struct heap *h, uint64_t mib, int mixed)
{
    h->bytes = mib << 20;
    h->base = mmap(NULL, h->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t maxblk = h->bytes / 32;
    h->blk = mmap(NULL, maxblk * sizeof(*h->blk), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    h->held = mmap(NULL, maxblk * sizeof(*h->held), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h->base == MAP_FAILED || h->blk == MAP_FAILED || h->held == MAP_FAILED)
        return -1;
    uintptr_t c = (uintptr_t)h->base, end = c + h->bytes, prev_held = 0;
    for (;;) {
        uint64_t csize = mixed ? 32 + 16 * (next() % 63) : 4112;
        if (c + csize + 16 > end)
            break;
        *(uint64_t *)(c + 8) = csize | 1u;
        uintptr_t mem = c + 16;
        uint64_t usable = csize - 8, i = h->nblk++;
        h->blk[i] = (struct pl_blk){ .mem = mem, .csize16 = (uint32_t)(csize / 16) };
        uintptr_t *w = (uintptr_t *)mem;
        for (uint64_t k = 1; k < usable / 8; k++)
            fill_word(h, &w[k], mixed);
        w[0] = 0;
        if (i % 2 == 0) { /* held: on the list; the odd ones are leaked */
            w[0] = prev_held;
            prev_held = mem;
            h->held[h->nheld++] = mem;
            h->scanned += usable;
        }
        c += csize;
    }
    h->held[h->nheld] = prev_held; /* the list's head: the global's value */
    return 0;
}

static long perf_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint64_t mib = 256;
    int mixed = 0, rounds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib"))
            mib = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--kind"))
            mixed = !strcmp(argv[i + 1], "mixed");
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
    }
    if (rounds < 1 || rounds > 64)
        rounds = 3;
    struct heap h;
    memset(&h, 0, sizeof(h));
    if (make_heap(&h, mib, mixed) < 0) {
        fprintf(stderr, "census_scan_bench: no memory for %lu MiB\n", (unsigned long)mib);
        return 1;
    }
    uintptr_t *global = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct pl_census_in *in = calloc(1, sizeof(*in));
    struct pl_census_out *out = mmap(NULL, PL_CENSUS_OUT_BYTES, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (global == MAP_FAILED || !in || out == MAP_FAILED)
        return 1;
    global[0] = h.held[h.nheld];
    in->globals[0].lo = (uintptr_t)global;
    in->globals[0].hi = (uintptr_t)global + 4096;
    in->n_globals = 1;
    struct pl_cmap maps[2] = {
        { .lo = (uintptr_t)h.base, .hi = (uintptr_t)h.base + h.bytes, .read = 1, .write = 1, .priv = 1,
          .anon = 1, .kind = PL_CMAP_HEAP },
        { .lo = (uintptr_t)global, .hi = (uintptr_t)global + 4096, .read = 1, .write = 1 },
    };
    long fd = perf_open();
    double ms[64], instr[64];
    uint64_t unreachable = 0, in_use = 0, retained = 0, nroots = 0;
    for (int r = 0; r < rounds; r++) {
        for (uint64_t i = 0; i < h.nblk; i++)
            h.blk[i].flags = 0;
        memset(out, 0, sizeof(out->end) + sizeof(out->n_roots));
        memset(&out->end, 0, sizeof(out->end));
        out->n_roots = 0;
        struct pl_census cs;
        memset(&cs, 0, sizeof(cs));
        cs.in = in;
        cs.out = out;
        cs.maps = maps;
        cs.nmaps = 2;
        cs.pagemap = -1;
        cs.blk = h.blk;
        cs.nblk = cs.capblk = h.nblk;
        uint64_t count = 0;
        if (fd >= 0) {
            ioctl((int)fd, PERF_EVENT_IOC_RESET, 0);
            ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0);
        }
        double t0 = cpu_ms();
        pl_census_mark(&cs);
        ms[r] = cpu_ms() - t0;
        if (fd >= 0) {
            ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
            if (read((int)fd, &count, sizeof(count)) != sizeof(count))
                count = 0;
        }
        instr[r] = fd >= 0 ? (double)count : -1;
        unreachable = out->end.unreachable_blocks;
        in_use = out->end.in_use_blocks;
        nroots = out->n_roots;
        retained = 0;
        for (uint64_t k = 0; k < nroots; k++)
            retained += out->roots[k].retained_bytes;
        if (out->end.status) {
            fprintf(stderr, "census_scan_bench: the mark failed: %s\n", out->end.why);
            return 1;
        }
        printf("round %d: cpu_ms=%.1f instructions=%.0f\n", r, ms[r], instr[r]);
    }
    qsort(ms, (size_t)rounds, sizeof(ms[0]), cmp);
    qsort(instr, (size_t)rounds, sizeof(instr[0]), cmp);
    double med = ms[rounds / 2], words = (double)h.scanned / 8;
    printf("scan kind=%s mib=%lu words_scanned=%.0f cpu_ms=%.1f gib_s=%.3f scanned_gib_s=%.3f "
           "instr_per_word=%.1f unreachable=%lu in_use=%lu roots=%lu retained=%lu\n",
           mixed ? "mixed" : "pointers", (unsigned long)mib, words, med,
           (double)h.bytes / (med / 1e3) / (double)(1u << 30), (double)h.scanned / (med / 1e3) / (double)(1u << 30),
           instr[0] < 0 ? -1.0 : instr[rounds / 2] / words, (unsigned long)unreachable, (unsigned long)in_use, (unsigned long)nroots, (unsigned long)retained);
    return 0;
}
