/* pl_dlopen.c - libraries loaded after attach must be patched too.
 *   load DIR  dlopen DIR/libplain.so (no RUNPATH) and DIR/libouter.so
 *             (RUNPATH $ORIGIN, needs libinner.so from its own directory);
 *             outer_open() then dlopens "libdyn.so" by bare name, which only
 *             the caller's $ORIGIN RUNPATH can find.
 *             DIR/libopengot.so too when it is there (full RELRO whose
 *             constructor makes its GOT writable again for good, as some
 *             hookers leave it).
 *   run       each library allocates known amounts (kept).
 * The libraries are built by tests/e2e/payload_dlopen.sh.
 */
#include <unistd.h>

#include "pl_common.h"

static void *hplain, *houter, *hopengot;

static int handle(const char *cmd, const char *arg)
{
    char path[4096];
    if (strcmp(cmd, "load") == 0) {
        snprintf(path, sizeof(path), "%s/libplain.so", arg);
        hplain = dlopen(path, RTLD_NOW);
        snprintf(path, sizeof(path), "%s/libouter.so", arg);
        houter = dlopen(path, RTLD_NOW);
        int (*outer_open)(void) = houter ? (int (*)(void))dlsym(houter, "outer_open") : NULL;
        if (!hplain || !outer_open || outer_open() != 0) {
            pl_say("load failed: %s", dlerror());
            return 0;
        }
        snprintf(path, sizeof(path), "%s/libopengot.so", arg);
        if (access(path, F_OK) == 0 && !(hopengot = dlopen(path, RTLD_NOW))) {
            pl_say("load failed: %s", dlerror());
            return 0;
        }
        pl_say("done load");
    } else if (strcmp(cmd, "run") == 0) {
        void (*plain_alloc)(void) = (void (*)(void))dlsym(hplain, "plain_alloc");
        void (*outer_alloc)(void) = (void (*)(void))dlsym(houter, "outer_alloc");
        if (!plain_alloc || !outer_alloc) {
            pl_say("run failed: %s", dlerror());
            return 0;
        }
        plain_alloc();
        outer_alloc(); /* calls inner_alloc and dyn_alloc too */
        pl_say("truth plain_alloc alloc_objs=100 alloc_bytes=100000");
        pl_say("truth outer_alloc_here alloc_objs=200 alloc_bytes=100000");
        pl_say("truth inner_alloc alloc_objs=300 alloc_bytes=90000");
        pl_say("truth dyn_alloc alloc_objs=400 alloc_bytes=80000");
        void (*opengot_alloc)(void) = hopengot ? (void (*)(void))dlsym(hopengot, "opengot_alloc") : NULL;
        if (opengot_alloc) {
            opengot_alloc();
            pl_say("truth opengot_alloc alloc_objs=500 alloc_bytes=80000");
        }
        pl_say("done run");
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
