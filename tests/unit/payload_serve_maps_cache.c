/* payload_serve_maps_cache.c - the maps text kept for a followed fork
 * child's last snapshot (payload/serve/maps_cache.h): given only while the
 * loader's counts are the ones it was read at, in this process or in a
 * fork child, and read again after a dlopen. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "payload/serve/maps_cache.h"

/* Whether [text, text+len) has the line of a mapping of a file whose path
 * ends in name. */
static int has_file(const char *text, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p < text + len;) {
        const char *e = memchr(p, '\n', (size_t)(text + len - p));
        if (!e)
            e = text + len;
        if ((size_t)(e - p) >= n && memcmp(e - n, name, n) == 0)
            return 1;
        p = e + 1;
    }
    return 0;
}

Test(maps_cache, kept_while_the_loader_is_unchanged_in_a_fork_child_too)
{
    size_t len = 0;
    cr_assert_eq(pl_maps_cache_refresh(), 0);
    const char *t = pl_maps_cache_current(&len);
    cr_assert_not_null(t);
    cr_expect(has_file(t, len, "/payload_serve_maps_cache"), "the test's own executable is in the copy");
    cr_expect(!has_file(t, len, "/libBrokenLocale.so.1"));

    /* A fork child gets the parent's copy as it is, then its own loader's
     * change voids it. */
    pid_t pid = fork();
    if (pid == 0) {
        size_t l2 = 0;
        const char *c = pl_maps_cache_current(&l2);
        if (!c || l2 != len || memcmp(c, t, len) != 0)
            _exit(1);
        if (!dlopen("libBrokenLocale.so.1", RTLD_NOW))
            _exit(2);
        _exit(pl_maps_cache_current(&l2) == NULL ? 0 : 3);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %d", st);

    /* Here: a dlopen voids it, the refresh reads the new module in. */
    void *h = dlopen("libBrokenLocale.so.1", RTLD_NOW);
    cr_assert_not_null(h, "%s", dlerror());
    cr_expect_null(pl_maps_cache_current(&len), "the loader loaded a module since the read");
    cr_assert_eq(pl_maps_cache_refresh(), 0);
    t = pl_maps_cache_current(&len);
    cr_assert_not_null(t);
    cr_expect(has_file(t, len, "/libBrokenLocale.so.1"));
    dlclose(h);
    cr_expect_null(pl_maps_cache_current(&len), "the loader unloaded a module since the read");

    /* Detach gives the pages back: no copy. */
    cr_assert_eq(pl_maps_cache_refresh(), 0);
    cr_assert_not_null(pl_maps_cache_current(&len));
    pl_maps_cache_release();
    cr_expect_null(pl_maps_cache_current(&len));
}
