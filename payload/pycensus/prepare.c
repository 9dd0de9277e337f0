/* prepare.c - finding the interpreter before a census's fork (agent
 * thread): its types by their exported symbols, its version, and what
 * makes a count impossible (said, never guessed). */
#include "payload/pycensus/pycensus.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "3.N" from a file name such as libpython3.8.so.1.0 or /usr/bin/python3.11:
 * 0x030N0000, or 0. *freethreaded: "python3.13t". */
static uint32_t version_from_name(const char *path, int *freethreaded)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = strstr(base, "python3.");
    if (!p)
        return 0;
    p += 8;
    unsigned minor = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 3) {
        minor = minor * 10 + (unsigned)(*p++ - '0');
        digits++;
    }
    if (!digits)
        return 0;
    *freethreaded = *p == 't';
    return 0x03000000u | (minor << 16);
}

static void refuse(struct pl_py_in *in, const char *why)
{
    in->status = -ENOTSUP;
    snprintf(in->why, sizeof(in->why), "%s", why);
}

void pl_pycensus_prepare(struct pl_py_in *in)
{
    memset(in, 0, sizeof(*in));
    void *tt = dlsym(RTLD_DEFAULT, "PyType_Type");
    if (!tt)
        return; /* not a Python process */
    in->type_type = (uintptr_t)tt;
    in->dict_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyDict_Type");
    in->unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    int freethreaded = 0;
    const uint32_t *pv = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11 and later */
    Dl_info di;
    char exe[512];
    const char *file = NULL;
    if (dladdr(tt, &di) && di.dli_fname && di.dli_fname[0])
        file = di.dli_fname;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if ((!file || !strstr(file, "python3.")) && n > 0) { /* the executable itself (Debian's) */
        exe[n] = '\0';
        file = exe;
    }
    uint32_t from_name = file ? version_from_name(file, &freethreaded) : 0;
    if (pv) {
        in->version = *pv;
        in->version_exact = 1;
    } else {
        in->version = from_name;
    }
    char why[sizeof(in->why)];
    unsigned minor = (in->version >> 16) & 0xff;
    /* The free-threaded build's object header puts ob_type at +24, not +8:
     * `type`'s own type is then not found where the default build has it. */
    if (freethreaded || *(const uintptr_t *)((const char *)tt + 8) != in->type_type) {
        refuse(in, "a free-threaded CPython build (its objects' header and allocator, mimalloc, differ): "
                   "objects not counted");
        return;
    }
    if (!in->version) {
        refuse(in, "the interpreter's version could not be read (no Py_Version, no python3.N file name): "
                   "objects not counted");
        return;
    }
    if ((in->version >> 24) != 3 || minor < 8 || minor > 13) {
        snprintf(why, sizeof(why), "Python %u.%u: the census knows the object layouts of CPython 3.8 to 3.13 "
                 "only: objects not counted", in->version >> 24, minor);
        refuse(in, why);
        return;
    }
    if (!in->dict_type || !in->unicode_type) {
        refuse(in, "PyDict_Type or PyUnicode_Type is not exported: objects not counted");
        return;
    }
    /* The debug hooks (PYTHONMALLOC=debug, pymalloc_debug, malloc_debug;
     * -X dev) put two words before every block's data: the objects are
     * not where the census looks for them. */
    const char *pm = getenv("PYTHONMALLOC"), *dev = getenv("PYTHONDEVMODE");
    if ((pm && strstr(pm, "debug")) || (dev && dev[0])) {
        snprintf(why, sizeof(why), "%s: the allocator's debug hooks move every object: objects not counted",
                 pm && strstr(pm, "debug") ? "PYTHONMALLOC=debug" : "PYTHONDEVMODE");
        refuse(in, why);
    }
}
