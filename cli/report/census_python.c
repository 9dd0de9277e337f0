/* census_python.c - a census's Python section (issue 29) as text and in
 * JSON (docs/JSON.md "python"); the records are kept by
 * cli/census/python.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/census/census.h"
#include "cli/report/report.h"
#include "cli/util/fmt.h"

static int by_bytes(const void *x, const void *y)
{
    const struct hi_census_pytype *a = *(const struct hi_census_pytype *const *)x;
    const struct hi_census_pytype *b = *(const struct hi_census_pytype *const *)y;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->objects != b->objects)
        return a->objects < b->objects ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The rows with objects, largest first; NULL (n 0) when none or no memory. */
static const struct hi_census_pytype **sorted(const struct cli_census *c, size_t *n)
{
    const struct hi_census_pytype **o = calloc(c->npytypes + 1, sizeof(*o));
    *n = 0;
    if (!o)
        return NULL;
    for (size_t i = 0; i < c->npytypes; i++)
        if (c->pytypes[i].objects)
            o[(*n)++] = &c->pytypes[i];
    qsort(o, *n, sizeof(*o), by_bytes);
    return o;
}

static const char *version(const struct hi_census_python *py, char *buf, size_t len)
{
    if (py->version_exact)
        snprintf(buf, len, "%u.%u.%u", py->version >> 24, (py->version >> 16) & 0xff, (py->version >> 8) & 0xff);
    else if (py->version)
        snprintf(buf, len, "%u.%u", py->version >> 24, (py->version >> 16) & 0xff);
    else
        snprintf(buf, len, "unknown");
    return buf;
}

void cli_census_write_python_text(FILE *out, const struct cli_census *c, unsigned top)
{
    if (!c->have_py)
        return;
    const struct hi_census_python *py = &c->py;
    char v[32], b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], name[4 * sizeof(py->why)];
    if (py->status < 0) {
        fprintf(out, "\nPython objects (CPython %s): not counted: %s\n", version(py, v, sizeof(v)),
                cli_fmt_printable(py->why, name, sizeof(name)));
        return;
    }
    uint64_t objects = py->pool_objects + py->malloc_objects, bytes = py->pool_object_bytes + py->malloc_object_bytes;
    fprintf(out, "\nPython objects by type (CPython %s; the blocks that hold them, in pymalloc's pools and "
                 "glibc's heap):\n",
            version(py, v, sizeof(v)));
    fprintf(out, "  %s objects, %s: %s in %u pools (%s of the pools' %s in use; the rest are buffers such as "
                 "lists' arrays and dicts' tables), %s in glibc's blocks (%s)\n",
            cli_fmt_count((double)objects, b1, sizeof(b1)), cli_fmt_bytes((double)bytes, b2, sizeof(b2)),
            cli_fmt_count((double)py->pool_objects, b3, sizeof(b3)), py->pools,
            cli_fmt_bytes((double)py->pool_object_bytes, b4, sizeof(b4)),
            cli_fmt_bytes((double)py->pool_used_bytes, b5, sizeof(b5)),
            cli_fmt_count((double)py->malloc_objects, b6, sizeof(b6)),
            cli_fmt_bytes((double)py->malloc_object_bytes, b7, sizeof(b7)));
    size_t n;
    const struct hi_census_pytype **o = sorted(c, &n);
    for (size_t i = 0; o && i < n && i < top; i++)
        fprintf(out, "  %10s %10s %s  %s\n", cli_fmt_bytes((double)o[i]->bytes, b1, sizeof(b1)),
                cli_fmt_count((double)o[i]->objects, b2, sizeof(b2)), o[i]->objects == 1 ? "object " : "objects",
                cli_fmt_printable(o[i]->name, name, sizeof(name)));
    size_t all = c->py_types_total > n ? c->py_types_total : n, shown = n < top ? n : top;
    if (all > shown)
        fprintf(out, "  ... %zu more (--top)\n", all - shown);
    free(o);
    fprintf(out, "  Not seen: objects outside the heap (static types, immortal and statically allocated "
                 "objects), and those of extensions' own allocators%s%s%s.\n",
            py->types_dropped ? "; types past the table of 4,096 are one row" : "", py->why[0] ? "; " : "",
            py->why[0] ? cli_fmt_printable(py->why, name, sizeof(name)) : "");
}

void cli_census_write_python_json(FILE *out, const struct cli_census *c, unsigned top)
{
    if (!c->have_py)
        return;
    const struct hi_census_python *py = &c->py;
    char v[32];
    fputs(",\n  \"python\": {\"version\": ", out);
    cli_json_write_str(out, version(py, v, sizeof(v)));
    fprintf(out, ", \"version_exact\": %s, \"counted\": %s, \"why\": ", py->version_exact ? "true" : "false",
            py->status < 0 ? "false" : "true");
    cli_json_write_str(out, py->status < 0 ? py->why : NULL);
    fputs(", \"not_seen\": ", out);
    cli_json_write_str(out, py->status < 0 ? NULL : py->why);
    fprintf(out, ",\n    \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"pools\": %u, \"pools_skipped\": %u, "
                 "\"pool_used_blocks\": %" PRIu64 ", \"pool_used_bytes\": %" PRIu64 ", \"pool_objects\": %" PRIu64
                 ", \"pool_object_bytes\": %" PRIu64 ", \"malloc_objects\": %" PRIu64
                 ", \"malloc_object_bytes\": %" PRIu64 ", \"types_dropped\": %u,\n    \"types\": [",
            py->pool_objects + py->malloc_objects, py->pool_object_bytes + py->malloc_object_bytes, py->pools,
            py->pools_skipped, py->pool_used_blocks, py->pool_used_bytes, py->pool_objects, py->pool_object_bytes,
            py->malloc_objects, py->malloc_object_bytes, py->types_dropped);
    size_t n;
    const struct hi_census_pytype **o = sorted(c, &n);
    for (size_t i = 0; o && i < n && i < top; i++) {
        fputs(i ? ",\n      {\"type\": " : "\n      {\"type\": ", out);
        cli_json_write_str(out, o[i]->name);
        fprintf(out, ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", o[i]->objects, o[i]->bytes);
    }
    free(o);
    fprintf(out, "], \"types_total\": %zu}", c->py_types_total > n ? c->py_types_total : n);
}
