/* inject_blockaudit.c - an LD_AUDIT library that holds the process inside
 * the dynamic linker at startup: la_objopen, for the first object, prints
 * "ready" and blocks until the file RELEASE_FILE exists. Built by
 * tests/e2e/inject_safepoint.sh with -DRELEASE_FILE=...; not a target. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    static int once;
    static const char msg[] = "ready\n";

    (void)map, (void)lmid, (void)cookie;
    if (once++)
        return 0;
    if (write(1, msg, sizeof(msg) - 1) < 0)
        _exit(3);
    while (access(RELEASE_FILE, F_OK) != 0) {
        struct timespec ts = { 0, 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}
