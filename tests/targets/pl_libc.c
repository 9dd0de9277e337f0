/* pl_libc.c - allocations made inside libc (libc's own GOT slots).
 *   run   do_strdup: 500 x strdup of 40 chars (kept);
 *         do_getline: 100 x getline into a fresh buffer (kept; glibc
 *         starts a buffer at 120 bytes);
 *         do_fopen: 50 x fopen (kept open).
 *   free  frees / closes them.
 */
#include <unistd.h>

#include "pl_common.h"

static char *dups[500];
static char *lines[100];
static FILE *files[50];
static const char *datafile;

__attribute__((noinline)) void do_strdup(void)
{
    for (int i = 0; i < 500; i++)
        dups[i] = strdup("0123456789012345678901234567890123456789");
}

__attribute__((noinline)) void do_getline(void)
{
    FILE *f = fopen(datafile, "r");
    if (!f)
        return;
    for (int i = 0; i < 100; i++) {
        size_t n = 0;
        lines[i] = NULL;
        if (getline(&lines[i], &n, f) < 0)
            break;
    }
    fclose(f);
}

__attribute__((noinline)) void do_fopen(void)
{
    for (int i = 0; i < 50; i++)
        files[i] = fopen("/dev/null", "r");
}

static int handle(const char *cmd, const char *arg)
{
    (void)arg;
    if (strcmp(cmd, "run") == 0) {
        do_strdup();
        do_getline();
        do_fopen();
        pl_say("truth do_strdup alloc_objs=500 alloc_bytes=20500");
        pl_say("truth do_getline alloc_objs=100 alloc_bytes=12000");
        pl_say("truth do_fopen alloc_objs=50");
        pl_say("done run");
    } else if (strcmp(cmd, "free") == 0) {
        for (int i = 0; i < 500; i++)
            free(dups[i]);
        for (int i = 0; i < 100; i++)
            free(lines[i]);
        for (int i = 0; i < 50; i++)
            if (files[i])
                fclose(files[i]);
        pl_say("done free");
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* argv[1]: a file of at least 100 short lines */
    datafile = argc > 1 ? argv[1] : "/etc/services";
    return pl_serve(handle);
}
