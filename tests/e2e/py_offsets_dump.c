/* py_offsets_dump.c - prints the payload's offsets (payload/python/
 * offsets.c) in py_offsets_probe.c's order: `py_offsets_dump MINOR` from
 * the table, `py_offsets_dump LIBPYTHON` from the _PyRuntime.debug_offsets
 * of that library (dlopened, never initialized: the offsets are its
 * initialized data). Exit 1 with the payload's reason when it refuses. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "payload/python/offsets.h"

static void dash_or(const char *key, int32_t v)
{
    if (v < 0)
        printf(" %s=-", key);
    else
        printf(" %s=%d", key, v);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    struct pl_py_offsets o;
    const char *why = "";
    int rc;
    char *end;
    unsigned long minor = strtoul(argv[1], &end, 10);
    if (*end == '\0') {
        rc = pl_py_offsets_table((unsigned)minor, &o, &why);
    } else {
        void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        const void *rt = lib ? dlsym(lib, "_PyRuntime") : NULL;
        if (!rt) {
            fprintf(stderr, "no _PyRuntime in %s: %s\n", argv[1], dlerror());
            return 2;
        }
        rc = pl_py_offsets_debug(rt, 4096, &o, &why);
    }
    if (rc < 0) {
        printf("refused: %s\n", why);
        return 1;
    }
    printf("minor=%u ts_interp=%u ts_frame=%u", o.minor, o.ts_interp, o.ts_frame);
    dash_or("cframe_current", o.chain == PL_PY_CHAIN_CFRAME ? (int32_t)o.cframe_current : -1);
    printf(" fr_back=%u fr_code=%u fr_instr=%u", o.fr_back, o.fr_code, o.fr_instr);
    dash_or("fr_owner", o.fr_owner);
    dash_or("fr_is_entry", o.fr_is_entry);
    printf(" co_filename=%u co_name=%u co_firstlineno=%u co_lines=%u co_code=%u ascii_data=%u\n", o.co_filename,
           o.co_name, o.co_firstlineno, o.co_lines, o.co_code, o.ascii_data);
    return 0;
}
