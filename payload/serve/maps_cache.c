/* maps_cache.c - the maps text kept for followed fork children's last
 * snapshots (see maps_cache.h). */
#include "payload/serve/maps_cache.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "payload/interpose/interpose.h"
#include "payload/sys/sys.h"

struct maps_copy {
    uint32_t valid; /* 1: text[0, len) is the maps at adds/subs */
    uint32_t len;
    unsigned long long adds, subs;
    char text[];
};

static struct maps_copy *pl_copy; /* agent */

static int matches(const unsigned long long v[2])
{
    return pl_copy && __atomic_load_n(&pl_copy->valid, __ATOMIC_ACQUIRE) && pl_copy->adds == v[0] &&
           pl_copy->subs == v[1];
}

/* The maps text into pl_copy->text; its length or -errno. */
static long read_maps(void)
{
    int fd = pl_proc_open_self("maps");
    if (fd < 0)
        return fd;
    size_t cap = PL_MAPS_CACHE_BYTES - sizeof(*pl_copy), have = 0;
    long ret = 0;
    for (;;) {
        ssize_t r = read(fd, pl_copy->text + have, cap - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ret = -errno;
            break;
        }
        if (r == 0)
            break;
        have += (size_t)r;
        if (have == cap) {
            ret = -EFBIG;
            break;
        }
    }
    close(fd);
    return ret < 0 ? ret : (long)have;
}

int pl_maps_cache_refresh(void)
{
    unsigned long long before[2], after[2];
    pl_modules_loader_counts(before);
    if (matches(before))
        return 0;
    if (!pl_copy && !(pl_copy = pl_arena_map(PL_MAPS_CACHE_BYTES)))
        return -ENOMEM;
    /* Invalid first: see maps_cache.h on a fork meanwhile. */
    __atomic_store_n(&pl_copy->valid, 0, __ATOMIC_RELEASE);
    long n = read_maps();
    /* A module loaded or unloaded during the read: the text may be of
     * either; the next refresh reads again. */
    pl_modules_loader_counts(after);
    if (n < 0 || after[0] != before[0] || after[1] != before[1])
        return n < 0 ? (int)n : -EAGAIN;
    pl_copy->len = (uint32_t)n;
    pl_copy->adds = before[0];
    pl_copy->subs = before[1];
    __atomic_store_n(&pl_copy->valid, 1, __ATOMIC_RELEASE);
    return 0;
}

const char *pl_maps_cache_current(size_t *len)
{
    unsigned long long v[2];
    if (!pl_copy)
        return NULL;
    pl_modules_loader_counts(v);
    if (!matches(v))
        return NULL;
    *len = pl_copy->len;
    return pl_copy->text;
}

void pl_maps_cache_release(void)
{
    if (pl_copy)
        pl_arena_clear(pl_copy, PL_MAPS_CACHE_BYTES);
}
