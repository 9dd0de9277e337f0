/* census_redis_shim.c - a libjemalloc.so.2 that is not jemalloc, for
 * census_redis.sh. Debian's redis-server is linked against libjemalloc.so.2
 * and a census only walks glibc's malloc. Put first on LD_LIBRARY_PATH,
 * this library defines only the three jemalloc functions redis calls
 * besides the malloc family, so malloc, free, calloc, realloc and
 * malloc_usable_size resolve to glibc's and redis runs on glibc malloc. */
#include <errno.h>
#include <stddef.h>
/* No jemalloc statistics: redis reports zeros in INFO. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{ (void)name; (void)oldp; (void)oldlenp; (void)newp; (void)newlen; return ENOENT; }
void malloc_stats_print(void (*cb)(void *, const char *), void *arg, const char *opts)
{ (void)opts; if (cb) cb(arg, "jemalloc is not in use: glibc malloc\n"); }
/* glibc's usable size for a request: chunks are 16-byte multiples of at
 * least 32 bytes, 8 of them the header. */
size_t nallocx(size_t size, int flags)
{ (void)flags; size_t c = (size + 8 + 15) & ~(size_t)15; if (c < 32) c = 32; return c - 8; }
