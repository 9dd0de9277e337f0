/* fuzz_profile_read.c - libFuzzer harness for cli_profile_read_mem(): the
 * whole path of `heapinject report FILE` and `heapinject diff A B` after
 * the file is in memory (format detection, gzip, JSON / pprof / heap
 * readers), then sort, diff and every writer (fuzz_profile.h). */
#include <stdint.h>

#include "fuzz/fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli_profile p;
    enum cli_profile_kind kind;
    char why[CLI_PROFILE_READ_WHY_LEN] = "";
    int rc = cli_profile_read_mem(data, size, &p, &kind, why, sizeof(why));
    fuzz_after_read(rc, &p, why);
    return 0;
}
