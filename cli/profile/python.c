/* python.c - the Python codes a profile names (profile.h, issue 29). */
#include "cli/profile/profile.h"

#include <stdlib.h>

const struct cli_pycode *cli_python_code(const struct cli_python *py, uint32_t id)
{
    size_t lo = 0, hi = py->ncodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (py->codes[mid].id == id)
            return &py->codes[mid];
        if (py->codes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void cli_python_clear(struct cli_python *py)
{
    for (size_t i = 0; i < py->ncodes; i++) {
        free(py->codes[i].name);
        free(py->codes[i].file);
    }
    free(py->codes);
    py->codes = NULL;
    py->ncodes = 0;
    py->have = false;
}

const char *cli_frame_runtime_name(uint8_t runtime)
{
    return runtime == HI_FRAME_PYTHON ? "python" : NULL;
}
