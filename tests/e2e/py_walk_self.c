/* py_walk_self.c - the payload's Python frame reading run inside the
 * Python process, as the agent and a hook would run it: pl_python_find
 * (symbols, version, offsets), then pl_python_frames on the calling
 * thread (its own chain, through the payload's checked reader), named
 * with the payload's names and lines. py_walk_target.py loads it with
 * ctypes (PY_WALK_SELF=this library) and prints what it returns beside its
 * own view of its stack. py_walk_no_state: the same read from a thread
 * that holds no Python state (a pthread of ours). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "payload/python/python.h"
#include "payload/python/read_self.h"

static struct pl_python py;
static char text[1 << 16];

__attribute__((visibility("default"))) const char *py_walk_self(void)
{
    static uint8_t table[1 << 16];
    pl_python_find(&py);
    if (!py.found) {
        snprintf(text, sizeof(text), "refused: %s", py.why);
        return text;
    }
    struct pl_py_frame frames[64];
    enum pl_python_none none = 0;
    int n = pl_python_frames(&py, frames, 64, &none);
    if (n == 0) {
        snprintf(text, sizeof(text), "none: %d", (int)none);
        return text;
    }
    struct pl_py_self_pages pages = { { 0 }, 0 };
    struct pl_py_reader r = { pl_py_read_self, &pages };
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < n && used < sizeof(text); i++) {
        char name[256], file[1024];
        uint32_t first;
        if (pl_py_code_names(&py.offsets, &py.types, &r, frames[i].code, name, sizeof(name), file, sizeof(file),
                             &first) < 0)
            return "refused: a code object cannot be named";
        long len = pl_py_code_linetable(&py.offsets, &r, frames[i].code, table, sizeof(table));
        uint32_t line = len < 0 ? 0 : pl_py_line(py.offsets.lines, table, (size_t)len, first, frames[i].instr);
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s (%s:%u)", i ? "\n" : "", name, file, line);
    }
    return text;
}

static void *no_state(void *arg)
{
    struct pl_py_frame frames[8];
    enum pl_python_none none = 0;
    int n = pl_python_frames(&py, frames, 8, &none);
    snprintf(arg, 64, "%s", n == 0 && none == PL_PYTHON_NO_STATE ? "no Python state" : "frames read");
    return NULL;
}

__attribute__((visibility("default"))) const char *py_walk_no_state(void)
{
    static char said[64] = "not run";
    pthread_t t;
    if (py.found && pthread_create(&t, NULL, no_state, said) == 0)
        pthread_join(t, NULL);
    return said;
}

/* Code objects named at first sight (payload/python/codes.c):
 * py_walk_remember enters the calling thread's frames' code objects;
 * py_walk_named names them later, when some may be gone. */
#include "payload/python/codes.h"

static struct pl_py_codes codes;
static uint32_t ids[64], instrs[64];
static int nids;

__attribute__((visibility("default"))) int py_walk_remember(void)
{
    if (!py.found)
        pl_python_find(&py);
    if (!py.found || (!codes.slots && pl_py_codes_init(&codes) < 0))
        return -1;
    struct pl_py_frame frames[64];
    enum pl_python_none none;
    int n = pl_python_frames(&py, frames, 64, &none);
    struct pl_py_self_pages pages = { { 0 }, 0 };
    struct pl_py_reader r = { pl_py_read_self, &pages };
    for (nids = 0; nids < n; nids++) {
        ids[nids] = pl_py_codes_get(&codes, &py.offsets, &py.types, &r, frames[nids].code);
        instrs[nids] = frames[nids].instr;
    }
    return n;
}

__attribute__((visibility("default"))) const char *py_walk_named(void)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < nids && used < sizeof(text); i++) {
        const struct pl_py_code *e = pl_py_codes_entry(&codes, ids[i]);
        if (!e)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%smissed", i ? "\n" : "");
        else
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s (%s:%u)", i ? "\n" : "", e->name, e->file,
                                     pl_py_line(py.offsets.lines, e->table, e->table_len, e->firstlineno, instrs[i]));
    }
    return text;
}
