/* cli_mmap.c - a program that maps anonymous memory itself and finds malloc
 * with dlsym, for the direct-mmap and dlsym tests (issue 14).
 *
 * Commands on stdin (pl_common.h), each answered with "done ..." giving
 * the ground truth:
 *   map N KIB      N anonymous mappings of KIB KiB each, made and touched
 *                  in map_regions -> done live=BYTES (all regions)
 *   unmap_half     munmap the second half of every region -> done live=
 *   remap KIB      mremap every region to KIB KiB (may move), touched, in
 *                  remap_regions -> done live=
 *   unmap          munmap every region -> done live=0
 *   file MIB       a MIB MiB shared file mapping (memfd), touched: not
 *                  anonymous memory -> done file=BYTES
 *   dlmalloc N KIB malloc found with dlsym(dlopen("libc.so.6"), "malloc"),
 *                  N blocks of KIB KiB kept, in dl_leak -> done leaked=BYTES
 *   malloc N KIB   N blocks of KIB KiB from plain malloc, kept, in plain_leak
 *                  -> done leaked=BYTES
 *   churn MS T     T threads map, unmap heads, tails, holes and wholes, and
 *                  mremap, at random for MS ms, in churn_thread; what they
 *                  leave mapped stays -> done live=BYTES (of those mappings)
 *   ptrs           the addresses of mmap, munmap and dlsym as this program's
 *                  GOT holds them now, and the real ones (looked up at start)
 *                  -> done got_mmap=P real_mmap=P got_dlsym=P real_dlsym=P
 *                  got_munmap=P real_munmap=P
 */
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pl_common.h"

#define MAX_REGIONS 4096

static char *regions[MAX_REGIONS];
static size_t region_len[MAX_REGIONS];
static int nregions;
static void *real_mmap, *real_munmap, *real_dlsym;

static size_t live_bytes(void)
{
    size_t n = 0;
    for (int i = 0; i < nregions; i++)
        n += region_len[i];
    return n;
}

static void touch(char *p, size_t len)
{
    for (size_t o = 0; o < len; o += 4096)
        p[o] = 1;
}

__attribute__((noinline)) static void map_regions(int n, size_t len)
{
    for (int i = 0; i < n && nregions < MAX_REGIONS; i++) {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            pl_say("error mmap");
            return;
        }
        touch(p, len);
        regions[nregions] = p;
        region_len[nregions++] = len;
    }
}

__attribute__((noinline)) static void remap_regions(size_t len)
{
    for (int i = 0; i < nregions; i++) {
        char *p = mremap(regions[i], region_len[i], len, MREMAP_MAYMOVE);
        if (p == MAP_FAILED) {
            pl_say("error mremap");
            return;
        }
        touch(p, len);
        regions[i] = p;
        region_len[i] = len;
    }
}

__attribute__((noinline)) static size_t dl_leak(int n, size_t len)
{
    void *h = dlopen("libc.so.6", RTLD_NOW);
    void *(*m)(size_t) = h ? (void *(*)(size_t))dlsym(h, "malloc") : NULL;
    if (!m)
        return 0;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        char *p = m(len);
        if (!p)
            break;
        memset(p, 1, len);
        total += len;
    }
    return total;
}

__attribute__((noinline)) static size_t plain_leak(int n, size_t len)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        char *p = malloc(len);
        if (!p)
            break;
        memset(p, 1, len);
        total += len;
    }
    return total;
}

#define CHURN_SLOTS 64
#define PG 4096ul

struct churn {
    long ms;
    unsigned seed;
    char *p[CHURN_SLOTS];
    size_t len[CHURN_SLOTS];
    size_t live;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void *churn_thread(void *arg)
{
    struct churn *c = arg;
    double end = now_ms() + (double)c->ms;
    while (now_ms() < end) {
        int i = (int)(rand_r(&c->seed) % CHURN_SLOTS);
        size_t pages = c->len[i] / PG;
        unsigned op = (unsigned)rand_r(&c->seed) % 6;
        if (!c->p[i]) {
            size_t n = (1 + (size_t)rand_r(&c->seed) % 32) * PG;
            char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                continue;
            p[0] = 1;
            c->p[i] = p, c->len[i] = n, c->live += n;
        } else if (op == 0 || pages < 3) { /* whole */
            munmap(c->p[i], c->len[i]);
            c->live -= c->len[i], c->p[i] = NULL, c->len[i] = 0;
        } else if (op == 1) { /* head */
            size_t k = (1 + (size_t)rand_r(&c->seed) % (pages - 1)) * PG;
            munmap(c->p[i], k);
            c->p[i] += k, c->len[i] -= k, c->live -= k;
        } else if (op == 2) { /* tail */
            size_t k = (1 + (size_t)rand_r(&c->seed) % (pages - 1)) * PG;
            munmap(c->p[i] + c->len[i] - k, k);
            c->len[i] -= k, c->live -= k;
        } else if (op == 3) { /* a hole of one page: the tail goes to a free slot, or away */
            int j = 0;
            while (j < CHURN_SLOTS && c->p[j])
                j++;
            munmap(c->p[i] + PG, PG);
            char *tail = c->p[i] + 2 * PG;
            size_t tl = c->len[i] - 2 * PG;
            c->len[i] = PG;
            c->live -= PG;
            if (j < CHURN_SLOTS) {
                c->p[j] = tail, c->len[j] = tl;
            } else {
                munmap(tail, tl);
                c->live -= tl;
            }
        } else { /* mremap to a new size, maybe moving */
            size_t n = (1 + (size_t)rand_r(&c->seed) % 32) * PG;
            char *p = mremap(c->p[i], c->len[i], n, MREMAP_MAYMOVE);
            if (p == MAP_FAILED)
                continue;
            p[n - 1] = 1;
            c->live += n - c->len[i];
            c->p[i] = p, c->len[i] = n;
        }
    }
    return NULL;
}

static size_t churn(long ms, int nthreads)
{
    static struct churn cs[8];
    pthread_t th[8];
    size_t live = 0;
    if (nthreads > 8)
        nthreads = 8;
    for (int t = 0; t < nthreads; t++) {
        memset(&cs[t], 0, sizeof(cs[t]));
        cs[t].ms = ms;
        cs[t].seed = (unsigned)t * 7919u + 1;
        pthread_create(&th[t], NULL, churn_thread, &cs[t]);
    }
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        live += cs[t].live;
    }
    return live;
}

static int handler(const char *cmd, const char *arg)
{
    int n = 0;
    unsigned long kib = 0;
    if (strcmp(cmd, "map") == 0 && sscanf(arg, "%d %lu", &n, &kib) == 2) {
        map_regions(n, kib << 10);
        pl_say("done live=%zu", live_bytes());
    } else if (strcmp(cmd, "unmap_half") == 0) {
        for (int i = 0; i < nregions; i++) {
            size_t half = region_len[i] / 2 & ~(size_t)4095;
            if (munmap(regions[i] + half, region_len[i] - half) != 0)
                pl_say("error munmap");
            region_len[i] = half;
        }
        pl_say("done live=%zu", live_bytes());
    } else if (strcmp(cmd, "remap") == 0 && sscanf(arg, "%lu", &kib) == 1) {
        remap_regions(kib << 10);
        pl_say("done live=%zu", live_bytes());
    } else if (strcmp(cmd, "unmap") == 0) {
        for (int i = 0; i < nregions; i++)
            munmap(regions[i], region_len[i]);
        nregions = 0;
        pl_say("done live=0");
    } else if (strcmp(cmd, "file") == 0 && sscanf(arg, "%lu", &kib) == 1) {
        size_t len = kib << 20;
        int fd = memfd_create("cli_mmap", 0);
        char *p = fd >= 0 && ftruncate(fd, (off_t)len) == 0
                      ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
        if (p == MAP_FAILED) {
            pl_say("error file");
            return 0;
        }
        touch(p, len);
        pl_say("done file=%zu", len);
    } else if (strcmp(cmd, "dlmalloc") == 0 && sscanf(arg, "%d %lu", &n, &kib) == 2) {
        pl_say("done leaked=%zu", dl_leak(n, kib << 10));
    } else if (strcmp(cmd, "malloc") == 0 && sscanf(arg, "%d %lu", &n, &kib) == 2) {
        pl_say("done leaked=%zu", plain_leak(n, kib << 10));
    } else if (strcmp(cmd, "churn") == 0 && sscanf(arg, "%lu %d", &kib, &n) == 2) {
        pl_say("done live=%zu", churn((long)kib, n));
    } else if (strcmp(cmd, "ptrs") == 0) {
        /* volatile: the loads go through the GOT now, not at compile time */
        void *volatile gm = (void *)mmap, *volatile gd = (void *)dlsym, *volatile gu = (void *)munmap;
        pl_say("done got_mmap=%p real_mmap=%p got_dlsym=%p real_dlsym=%p got_munmap=%p real_munmap=%p", gm,
               real_mmap, gd, real_dlsym, gu, real_munmap);
    } else {
        return 1;
    }
    return 0;
}

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    real_mmap = libc ? dlsym(libc, "mmap") : NULL;
    real_munmap = libc ? dlsym(libc, "munmap") : NULL;
    real_dlsym = libc ? dlsym(libc, "dlsym") : NULL;
    return pl_serve(handler);
}
