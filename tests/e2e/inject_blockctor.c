/* inject_blockctor.c - a library whose constructor prints "ready" and then
 * blocks, inside the dynamic linker's dlopen (holding the loader's lock),
 * until the file RELEASE_FILE exists. Built by tests/e2e/inject_safepoint.sh
 * with -DRELEASE_FILE=...; not a target program. */
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void block_in_ctor(void)
{
    static const char msg[] = "ready\n";

    if (write(1, msg, sizeof(msg) - 1) < 0)
        _exit(3);
    while (access(RELEASE_FILE, F_OK) != 0) {
        struct timespec ts = { 0, 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
}
