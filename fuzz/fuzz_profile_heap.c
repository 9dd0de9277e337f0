/* fuzz_profile_heap.c - libFuzzer harness for the gperftools heap profile
 * reader (cli_profile_read_heap), then sort, diff and every writer. */
#include <stdint.h>

#include "fuzz/fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli_profile p;
    char why[CLI_PROFILE_READ_WHY_LEN] = "";
    memset(&p, 0, sizeof(p));
    int rc = cli_profile_read_heap((const char *)data, size, &p, why, sizeof(why));
    fuzz_after_reader(rc, &p, why);
    return 0;
}
