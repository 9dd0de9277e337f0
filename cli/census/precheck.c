/* precheck.c - a census's refusals that /proc can tell before attaching. */
#include "cli/census/precheck.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/exitcode.h"
#include "cli/report/fmt.h"
#include "cli/target/slots.h"
#include "injector/maps.h"

const char *cli_census_allocator_of(const char *path)
{
    static const struct {
        const char *prefix, *name;
    } known[] = { { "libjemalloc", "jemalloc" }, { "libtcmalloc", "tcmalloc" }, { "libmimalloc", "mimalloc" },
                  { "libhoard", "Hoard" },       { "libsnmalloc", "snmalloc" } };
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strncmp(base, known[i].prefix, strlen(known[i].prefix)))
            return known[i].name;
    return NULL;
}

/* The leader's seccomp mode from /proc/PID/status: 2 under a filter, 0 or
 * 1 otherwise, -1 when unknown. */
static int seccomp_mode(pid_t pid)
{
    char path[64], buf[4096];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *s = strstr(buf, "\nSeccomp:");
    return s ? (int)strtol(s + 9, NULL, 10) : -1;
}

int cli_census_precheck(pid_t pid, const char *comm)
{
    char module[4096], shown[256];

    /* The module that the process's bound malloc slots point into: glibc's
     * libc, or the allocator that took its place (preloaded, or linked). */
    if (cli_slots_malloc_module(pid, module, sizeof(module)) == 1 && !inj_maps_is_libc(module)) {
        const char *name = cli_census_allocator_of(module);
        const char *base = strrchr(module, '/');
        char what[300], exe[4096], link[64];
        ssize_t n;
        cli_fmt_printable(base ? base + 1 : module, shown, sizeof(shown));
        snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
        bool own = (n = readlink(link, exe, sizeof(exe) - 1)) > 0 && (exe[n] = '\0', !strcmp(exe, module));
        /* An executable with its own allocator cannot be profiled either
         * (cli/target/exe_alloc.h): only `status` is left to offer. */
        snprintf(what, sizeof(what), own ? "an allocator linked into its executable" : name ? "%s" : "the malloc of %s",
                 name ? name : shown);
        fprintf(stderr,
                "heapinject: pid %d (%s): no census: census supports glibc malloc; this process uses %s (its "
                "malloc slots point into %s); nothing was attached. 'heapinject status -p %d' still shows where "
                "its resident bytes are",
                (int)pid, comm, what, shown, (int)pid);
        if (!own)
            fprintf(stderr, ", 'heapinject -p %d' what is allocated from now on", (int)pid);
        fputc('\n', stderr);
        return CLI_EXIT_UNSUPPORTED;
    }
    /* A census forks a copy of the process; a filter may forbid that fork
     * (and a forbidden call may kill the process). The filter a thread
     * has is inherited by the threads it starts, the agent's included. */
    if (seccomp_mode(pid) == 2) {
        fprintf(stderr,
                "heapinject: pid %d (%s): no census: the process runs under a seccomp filter, which may forbid "
                "the fork a census takes; nothing was attached. 'heapinject status -p %d' still shows where "
                "its resident bytes are\n",
                (int)pid, comm, (int)pid);
        return CLI_EXIT_UNSUPPORTED;
    }
    return CLI_EXIT_OK;
}
