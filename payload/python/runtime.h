/* runtime.h - the CPython in the target, found once by the agent thread,
 * and a sampled thread's Python frames read with it (issue 29 item 1;
 * docs/DESIGN-NOTES.md, "Python frames in samples").
 *
 * pl_python_find runs in the agent thread (dlsym, dladdr): the exported
 * symbols (_PyRuntime, PyCode_Type, PyUnicode_Type,
 * PyGILState_GetThisThreadState), the version (Py_Version, else the name
 * of the library or executable that holds them), the offsets. A process
 * without them, or with a version or build not read, gets a reason.
 * pl_python_frames is for the hook: no lock, no allocation, no Python API
 * but PyGILState_GetThisThreadState (pthread_getspecific on the runtime's
 * key), every read checked (read_self.h). */
#ifndef HI_PAYLOAD_PYTHON_RUNTIME_H
#define HI_PAYLOAD_PYTHON_RUNTIME_H

#include "payload/python/offsets.h"
#include "payload/python/walk.h"

struct pl_python {
    int found;                   /* 1: frames can be read */
    char why[160];               /* found 0: why not ("" when not Python) */
    struct pl_py_offsets offsets;
    struct pl_py_types types;
    uintptr_t runtime;
    void *(*this_thread_state)(void);
    /* The state the thread runs now (_PyThreadState_UncheckedGet; 3.13:
     * PyThreadState_GetUnchecked), NULL when not exported. 3.12+: the
     * thread's own (a thread-local); before, the GIL holder's. */
    void *(*current_thread_state)(void);
};

/* 3.minor from "python3.N" in a file name (libpython3.8.so.1.0,
 * /usr/bin/python3.11), 0 when absent; *flag: the build's letter after it
 * (d: debug, t: free-threaded) or '\0'. */
unsigned pl_python_minor_from_name(const char *path, char *flag);

/* Agent thread: fills *py. */
void pl_python_find(struct pl_python *py);

/* Why a sample has no Python frames (counted by the caller). */
enum pl_python_none {
    PL_PYTHON_NO_STATE = 1,  /* the thread holds no Python state */
    PL_PYTHON_NOT_VALID,     /* the chain did not validate: dropped */
    PL_PYTHON_SUBINTERP,     /* a sub-interpreter runs: its frames are not read */
};

/* The calling thread's Python frames, innermost first, at most max: their
 * count, or 0 with *none set (when py->found). */
int pl_python_frames(const struct pl_python *py, struct pl_py_frame *out, unsigned max, enum pl_python_none *none);

#endif /* HI_PAYLOAD_PYTHON_RUNTIME_H */
