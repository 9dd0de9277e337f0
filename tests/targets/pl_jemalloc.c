/* pl_jemalloc.c - a target with two allocator families, for
 * tests/e2e/payload_jemalloc.sh: the executable's malloc slots bind to
 * glibc (or to jemalloc under LD_PRELOAD), a library it dlopen()s with
 * RTLD_DEEPBIND (argv[1], linked against libjemalloc.so.2) binds to
 * jemalloc.
 *   run      exe_keep(): 100 blocks of 1000 bytes from the executable;
 *            je_keep(): 100 blocks of 3000 bytes from the library. Prints
 *            truth lines for both (all live).
 *   release  frees them all.
 *   check    "check exe=glibc|jemalloc|? lib=jemalloc|?": where each
 *            module's malloc goes now, seen from the allocators' own
 *            counters (glibc's mallinfo2, jemalloc's thread.allocated).
 * Commands as in pl_common.h. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>

#include "pl_common.h"

static void *lib;
static void (*je_keep)(void), (*je_release)(void);
static int (*je_side_is_jemalloc)(void);
static void *kept[100];

__attribute__((noinline)) void exe_keep(void)
{
    for (int i = 0; i < 100; i++)
        kept[i] = malloc(1000);
}

/* Where the executable's own malloc goes. */
static const char *exe_family(void)
{
    int (*ctl)(const char *, void *, size_t *, void *, size_t) =
        (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
    struct mallinfo2 before = mallinfo2();
    uint64_t a = 0, b = 0;
    size_t len = sizeof(a);
    volatile char *p;
    int je;

    if (ctl)
        ctl("thread.allocated", &a, &len, NULL, 0);
    p = malloc(50000);
    if (!p)
        return "?";
    p[0] = 1;
    struct mallinfo2 after = mallinfo2();
    len = sizeof(b);
    je = ctl && !ctl("thread.allocated", &b, &len, NULL, 0) && b >= a + 50000;
    free((void *)p);
    if (je)
        return "jemalloc";
    return after.uordblks >= before.uordblks + 50000 ? "glibc" : "?";
}

static int handler(const char *cmd, const char *arg)
{
    (void)arg;
    if (!strcmp(cmd, "run")) {
        exe_keep();
        je_keep();
        pl_say("truth exe_keep alloc_objs=100 alloc_bytes=100000 live_objs=100 live_bytes=100000");
        pl_say("truth je_keep alloc_objs=100 alloc_bytes=300000 live_objs=100 live_bytes=300000");
        pl_say("done run");
    } else if (!strcmp(cmd, "release")) {
        for (int i = 0; i < 100; i++)
            free(kept[i]);
        je_release();
        pl_say("done release");
    } else if (!strcmp(cmd, "check")) {
        pl_say("check exe=%s lib=%s", exe_family(), je_side_is_jemalloc() ? "jemalloc" : "?");
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pl_jemalloc LIBRARY\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    je_keep = (void (*)(void))dlsym(lib, "je_keep");
    je_release = (void (*)(void))dlsym(lib, "je_release");
    je_side_is_jemalloc = (int (*)(void))dlsym(lib, "je_side_is_jemalloc");
    if (!je_keep || !je_release || !je_side_is_jemalloc) {
        fprintf(stderr, "symbols missing in %s\n", argv[1]);
        return 1;
    }
    return pl_serve(handler);
}
