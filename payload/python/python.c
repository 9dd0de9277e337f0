/* python.c - the target's CPython, found and read (python.h). */
#include "payload/python/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "payload/python/read_self.h"
#include "payload/sys/sys.h"

/* PyThreadState.interp: after prev and next, 3.8 to 3.13. */
#define TSTATE_INTERP 16u

/* The module that defines PyCode_Type or _PyRuntime: the interpreter. */
static int find_interpreter(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pl_dyn *d = arg;
    if (pl_dyn_parse(info, d) < 0)
        return 0;
    return pl_dyn_lookup(d, "PyCode_Type") || pl_dyn_lookup(d, "_PyRuntime");
}

unsigned pl_python_minor_from_name(const char *path, char *flag)
{
    const char *base = strrchr(path, '/');
    const char *p = strstr(base ? base : path, "python3.");
    if (!p)
        return 0;
    p += strlen("python3.");
    unsigned minor = 0;
    while (*p >= '0' && *p <= '9' && minor < 100)
        minor = minor * 10 + (unsigned)(*p++ - '0');
    *flag = (*p == 'd' || *p == 't') ? *p : '\0';
    return minor;
}

void pl_python_find(struct pl_python *py)
{
    memset(py, 0, sizeof(*py));
    /* Not dlsym: a name it does not find costs a malloc'd error string
     * (and the thread's dlerror state) from the program's allocator, in
     * our thread. Under jemalloc that gave the thread an arena and
     * started one more background thread that stayed after detach
     * (rel_redis_threads). The module's own symbol table costs nothing. */
    struct pl_dyn d;
    memset(&d, 0, sizeof(d));
    if (!dl_iterate_phdr(find_interpreter, &d))
        return; /* not Python: nothing to say */
    void *runtime = (void *)pl_dyn_lookup(&d, "_PyRuntime");
    void *code = (void *)pl_dyn_lookup(&d, "PyCode_Type");
    void *str = (void *)pl_dyn_lookup(&d, "PyUnicode_Type");
    void *get = (void *)pl_dyn_lookup(&d, "PyGILState_GetThisThreadState");
    if (!runtime || !code || !str || !get) {
        snprintf(py->why, sizeof(py->why), "no Python frames: the interpreter's symbols are not all exported");
        return;
    }
    Dl_info info;
    char flag = '\0';
    unsigned minor = 0;
    const unsigned long *hex = (const unsigned long *)pl_dyn_lookup(&d, "Py_Version");
    if (hex && (*hex >> 24) == 3)
        minor = (unsigned)((*hex >> 16) & 0xff);
    if (dladdr(code, &info) && info.dli_fname) {
        unsigned named = pl_python_minor_from_name(info.dli_fname, &flag);
        if (!minor)
            minor = named;
    }
    if (!minor) {
        snprintf(py->why, sizeof(py->why), "no Python frames: the interpreter's version is not known");
        return;
    }
    if (flag) {
        snprintf(py->why, sizeof(py->why), "no Python frames: Python 3.%u%c (%s build) is not read", minor, flag,
                 flag == 'd' ? "a debug" : "a free-threaded");
        return;
    }
    const char *why = "";
    int rc = minor == 13 ? pl_py_offsets_debug(runtime, 4096, &py->offsets, &why)
                         : pl_py_offsets_table(minor, &py->offsets, &why);
    if (rc < 0) {
        snprintf(py->why, sizeof(py->why), "no Python frames: Python 3.%u: %s", minor, why);
        return;
    }
    py->types = (struct pl_py_types){ (uintptr_t)code, (uintptr_t)str };
    py->runtime = (uintptr_t)runtime;
    py->this_thread_state = (void *(*)(void))get;
    void *cur = (void *)pl_dyn_lookup(&d, "PyThreadState_GetUnchecked");
    if (!cur)
        cur = (void *)pl_dyn_lookup(&d, "_PyThreadState_UncheckedGet");
    py->current_thread_state = (void *(*)(void))cur;
    py->found = 1;
}

int pl_python_frames(const struct pl_python *py, struct pl_py_frame *out, unsigned max, enum pl_python_none *none)
{
    void *tstate = py->this_thread_state();
    if (!tstate) {
        *none = PL_PYTHON_NO_STATE;
        return 0;
    }
    struct pl_py_self_pages pages = { { 0 }, 0 };
    struct pl_py_reader r = { pl_py_read_self, &pages };
    /* Before 3.12 the thread's first state (PyGILState's) stays its state
     * while it runs a sub-interpreter (_xxsubinterpreters.run_string swaps
     * in another): its chain is the caller's, stale below the switch, and
     * would put run_string's caller where the sub-interpreter's code runs
     * (py_edges on 3.11). 3.12+ rebinds PyGILState's to the state swapped
     * in, whose frames are the sub-interpreter's own and are read. So a
     * current state of another interpreter is refused and counted. Before
     * 3.12 the current state is the GIL holder's, maybe another thread's:
     * its interp is read checked (a state is freed only after its thread
     * left the GIL, and a freed chunk of malloc's stays mapped), and a
     * thread allocating without the GIL while another runs a
     * sub-interpreter is refused too: native only, never a wrong frame. */
    void *cur = py->current_thread_state ? py->current_thread_state() : NULL;
    if (cur && cur != tstate) {
        uintptr_t a, b;
        if (pl_py_read_self(&pages, (uintptr_t)tstate + TSTATE_INTERP, &a, sizeof(a)) < 0 ||
            pl_py_read_self(&pages, (uintptr_t)cur + TSTATE_INTERP, &b, sizeof(b)) < 0) {
            *none = PL_PYTHON_NOT_VALID;
            return 0;
        }
        if (a != b) {
            *none = PL_PYTHON_SUBINTERP;
            return 0;
        }
        if (py->offsets.minor >= 12)
            tstate = cur; /* the thread's own (a thread-local), in the same interpreter */
    }
    int n = pl_py_walk(&py->offsets, &py->types, &r, (uintptr_t)tstate, out, max);
    if (n < 0) {
        *none = PL_PYTHON_NOT_VALID;
        return 0;
    }
    return n;
}
