/* fuzz_profile_pprof.c - libFuzzer harness for the pprof reader
 * (cli_profile_read_pprof). The input is the profile.proto message itself;
 * the harness gzips it (a pprof file is gzipped protobuf), so the fuzzer
 * works on the protobuf and not against the gzip checksum. The gzip layer
 * itself is fuzzed by fuzz_profile_read. */
#include <stdint.h>
#include <zlib.h>

#include "fuzz/fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char gz[1 << 21];
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (size > (1 << 20) || deflateInit2(&z, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)size;
    z.next_out = gz;
    z.avail_out = sizeof(gz);
    int zr = deflate(&z, Z_FINISH);
    size_t n = sizeof(gz) - z.avail_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END)
        return 0;

    struct cli_profile p;
    char why[CLI_PROFILE_READ_WHY_LEN] = "";
    memset(&p, 0, sizeof(p));
    int rc = cli_profile_read_pprof(gz, n, &p, why, sizeof(why));
    fuzz_after_reader(rc, &p, why);
    return 0;
}
