/* prepare.c - finding the interpreter before a census's fork (agent
 * thread): its types by their exported symbols, its version, and what
 * makes a count impossible (said, never guessed). */
#include "payload/census/python.h"

#include <link.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "payload/sys/sys.h"

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

/* `-X dev` among the interpreter's own options (before the script, -c or
 * -m: what follows is the program's): the development mode, whose debug
 * hooks move every object. */
static int dev_mode_option(void)
{
    char buf[4096];
    int fd = pl_proc_open_self("cmdline");
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *end = buf + n, *a = buf + strlen(buf) + 1; /* past argv[0] */
    while (a < end) {
        const char *next = a + strlen(a) + 1;
        if (a[0] != '-' || !strcmp(a, "-c") || !strcmp(a, "-m") || !strcmp(a, "-") || !strcmp(a, "--"))
            return 0;
        if (!strcmp(a, "-X") || !strcmp(a, "-W")) { /* an option with its value apart */
            if (next < end && a[1] == 'X' && !strncmp(next, "dev", 3) && (next[3] == '\0' || next[3] == '='))
                return 1;
            next = next < end ? next + strlen(next) + 1 : next;
        } else if (!strncmp(a, "-Xdev", 5) && (a[5] == '\0' || a[5] == '=')) {
            return 1;
        }
        a = next;
    }
    return 0;
}

static void refuse(struct pl_py_in *in, const char *why)
{
    in->status = -ENOTSUP;
    snprintf(in->why, sizeof(in->why), "%s", why);
}

/* The module that defines PyType_Type (libpython, or the executable that
 * links it in), by its own dynamic symbol table: dlsym would malloc an
 * error message in every process that is not Python. */
struct found {
    uintptr_t type_type, dict_type, unicode_type, version;
    char name[512];
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct found *f = arg;
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) < 0 || !(f->type_type = pl_dyn_lookup(&d, "PyType_Type")))
        return 0;
    f->dict_type = pl_dyn_lookup(&d, "PyDict_Type");
    f->unicode_type = pl_dyn_lookup(&d, "PyUnicode_Type");
    f->version = pl_dyn_lookup(&d, "Py_Version"); /* 3.11 and later */
    snprintf(f->name, sizeof(f->name), "%s", info->dlpi_name ? info->dlpi_name : "");
    return 1;
}

void pl_pycensus_prepare(struct pl_py_in *in)
{
    memset(in, 0, sizeof(*in));
    struct found f;
    memset(&f, 0, sizeof(f));
    dl_iterate_phdr(find_module, &f);
    if (!f.type_type)
        return; /* not a Python process */
    const void *tt = (const void *)f.type_type;
    in->type_type = f.type_type;
    in->dict_type = f.dict_type;
    in->unicode_type = f.unicode_type;
    int freethreaded = 0;
    char exe[512];
    const char *file = f.name;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (!strstr(file, "python3.") && n > 0) { /* the executable itself (Debian's) */
        exe[n] = '\0';
        file = exe;
    }
    uint32_t from_name = version_from_name(file, &freethreaded);
    if (f.version) {
        in->version = *(const uint32_t *)f.version;
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
     * -X dev, PYTHONDEVMODE) put two words before every block's data: the
     * objects are not where the census looks for them. (A program that
     * turns them on itself, PyMem_SetupDebugHooks, is not seen.) */
    const char *pm = getenv("PYTHONMALLOC"), *dev = getenv("PYTHONDEVMODE");
    int xdev = dev_mode_option();
    if ((pm && strstr(pm, "debug")) || (dev && dev[0]) || xdev) {
        snprintf(why, sizeof(why), "%s: the allocator's debug hooks move every object: objects not counted",
                 pm && strstr(pm, "debug") ? "PYTHONMALLOC=debug" : xdev ? "-X dev" : "PYTHONDEVMODE");
        refuse(in, why);
    }
}
