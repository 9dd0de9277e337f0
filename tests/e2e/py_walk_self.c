/* py_walk_self.c - the payload's walker run inside the Python process, as
 * a hook would run it: the thread's own chain read through the payload's
 * own reader (payload/python/read_self.c). py_walk_target.py loads it with
 * ctypes (PY_WALK_SELF=this library) and prints what it returns beside its
 * own view of its stack. */
#include <stdio.h>
#include <string.h>

#include "payload/python/read_self.h"
#include "payload/python/walk.h"

__attribute__((visibility("default"))) const char *py_walk_self(uintptr_t tstate, uintptr_t code_type,
                                                                  uintptr_t str_type, uintptr_t runtime,
                                                                  unsigned minor)
{
    static char text[1 << 16];
    static uint8_t table[1 << 16];
    struct pl_py_self_pages pages = { { 0, 0 }, 0 };
    struct pl_py_reader r = { pl_py_read_self, &pages };
    struct pl_py_types types = { code_type, str_type };
    struct pl_py_offsets o;
    const char *why = "";
    int rc = minor == 13 ? pl_py_offsets_debug((const void *)runtime, 4096, &o, &why)
                         : pl_py_offsets_table(minor, &o, &why);
    if (rc < 0) {
        snprintf(text, sizeof(text), "refused: %s", why);
        return text;
    }
    struct pl_py_frame frames[64];
    int n = pl_py_walk(&o, &types, &r, tstate, frames, 64);
    if (n < 0)
        return "refused: the frame chain did not validate";
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < n && used < sizeof(text); i++) {
        char name[256], file[1024];
        uint32_t first;
        if (pl_py_code_names(&o, &types, &r, frames[i].code, name, sizeof(name), file, sizeof(file), &first) < 0)
            return "refused: a code object cannot be named";
        long len = pl_py_code_linetable(&o, &r, frames[i].code, table, sizeof(table));
        uint32_t line = len < 0 ? 0 : pl_py_line(o.lines, table, (size_t)len, first, frames[i].instr);
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s (%s:%u)", i ? "\n" : "", name, file, line);
    }
    return text;
}
