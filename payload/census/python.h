/* python.h - a census of a CPython process's objects by type (issue 29).
 *
 * The agent finds the interpreter before the fork (pl_pycensus_prepare:
 * `type`, `dict` and `str` by their exported symbols, the version from
 * Py_Version or the library's name, what it cannot count and why). The
 * census child then walks its copy (pl_pycensus_child): every pool of
 * pymalloc's arenas whose header and free list check out, and glibc's
 * in-use blocks (the larger objects), and counts the blocks that hold an
 * object by the object's type. An object is a block whose words, at the
 * offset its type says (PyGC_Head, 3.11's pre-header), are a reference
 * count and a pointer to a type, itself an object whose type is `type` or
 * a metatype. Every read is checked against the copy's maps first. */
#ifndef HI_PAYLOAD_PYCENSUS_H
#define HI_PAYLOAD_PYCENSUS_H

#include <stdint.h>

#include "common/proto.h"

#define PL_PY_MAX_TYPES 4096u

/* What the agent hands the child; type_type 0: not a Python process. */
struct pl_py_in {
    uintptr_t type_type, dict_type, unicode_type;
    uint32_t version, version_exact;
    int32_t status; /* < 0: nothing will be counted, why says why */
    char why[192];
};

/* What the child fills in (in pl_census_out). */
struct pl_py_out {
    struct hi_census_python sum;
    struct hi_census_pytype types[PL_PY_MAX_TYPES];
};

/* Agent thread, before the fork (may call dlsym/dladdr). */
void pl_pycensus_prepare(struct pl_py_in *in);

struct pl_census;
/* In the census child, after the heap walk: fills out. */
void pl_pycensus_child(struct pl_census *cs, const struct pl_py_in *in, struct pl_py_out *out);

#endif /* HI_PAYLOAD_PYCENSUS_H */
