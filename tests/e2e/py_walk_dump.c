#define _GNU_SOURCE 1 /* process_vm_readv */
/* py_walk_dump.c - reads a stopped thread's Python frames from outside
 * with the payload's own walker (payload/python/walk.c), through
 * process_vm_readv, and prints them as py_walk_target.py prints its own:
 * `qualname (file:line)`, innermost first.
 *   py_walk_dump PID TSTATE CODE_TYPE STR_TYPE PYRUNTIME MINOR
 * Exit 1 with the payload's reason when it refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "payload/python/walk.h"

static int read_other(void *ctx, uintptr_t addr, void *out, size_t len)
{
    pid_t pid = *(pid_t *)ctx;
    struct iovec local = { out, len }, remote = { (void *)addr, len };
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    pid_t pid = (pid_t)strtol(argv[1], NULL, 0);
    uintptr_t tstate = strtoull(argv[2], NULL, 0);
    struct pl_py_types types = { strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0) };
    uintptr_t runtime = strtoull(argv[5], NULL, 0);
    unsigned minor = (unsigned)strtoul(argv[6], NULL, 0);
    struct pl_py_reader r = { read_other, &pid };
    struct pl_py_offsets o;
    const char *why = "";
    int rc;
    if (minor == 13) {
        static uint8_t debug[4096];
        rc = r.read(r.ctx, runtime, debug, sizeof(debug)) < 0 ? (why = "cannot read _PyRuntime", -1)
                                                                : pl_py_offsets_debug(debug, sizeof(debug), &o, &why);
    } else {
        rc = pl_py_offsets_table(minor, &o, &why);
    }
    if (rc < 0) {
        printf("refused: %s\n", why);
        return 1;
    }
    struct pl_py_frame frames[64];
    int n = pl_py_walk(&o, &types, &r, tstate, frames, 64);
    if (n < 0) {
        printf("refused: the frame chain did not validate\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char name[256], file[1024];
        uint32_t first;
        static uint8_t table[1 << 16];
        if (pl_py_code_names(&o, &types, &r, frames[i].code, name, sizeof(name), file, sizeof(file), &first) < 0) {
            printf("refused: code object %#lx cannot be named\n", (unsigned long)frames[i].code);
            return 1;
        }
        long len = pl_py_code_linetable(&o, &r, frames[i].code, table, sizeof(table));
        uint32_t line = len < 0 ? 0 : pl_py_line(o.lines, table, (size_t)len, first, frames[i].instr);
        printf("%s (%s:%u)\n", name, file, line);
    }
    return 0;
}
