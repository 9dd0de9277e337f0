/* demangle.c - C++ demangling through libstdc++'s __cxa_demangle.
 *
 * elfutils has no public demangler (eu-stack links libstdc++ for it). The
 * cli is C and its link line carries no -lstdc++, so __cxa_demangle is a weak
 * reference: when the binary is linked with libstdc++ it is used directly,
 * otherwise libstdc++.so.6 is dlopen'ed on first need (it is on every system
 * that runs C++ programs, the only ones with mangled names). Without either,
 * names stay mangled: still correct, only less readable. */
#include "cli/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status)
    __attribute__((weak));

static demangle_fn resolved;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    if (__cxa_demangle) {
        resolved = __cxa_demangle;
        return;
    }
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        resolved = (demangle_fn)dlsym(h, "__cxa_demangle");
    /* h stays open for the life of the process: resolved points into it. */
}

char *cli_demangle(const char *name)
{
    if (!name)
        return NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        pthread_once(&resolve_once, resolve);
        if (resolved) {
            int status = -1;
            char *d = resolved(name, NULL, NULL, &status);
            if (d && status == 0)
                return d;
            free(d);
        }
    }
    return strdup(name);
}
