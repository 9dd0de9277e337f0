/* precheck.c - a census's refusals that /proc can tell before attaching. */
#include "cli/census/precheck.h"
#include "cli/census/uffd_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/util/exitcode.h"
#include "cli/util/fmt.h"
#include "cli/process/slots.h"
#include "injector/maps.h"
#include "injector/target.h"

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
         * (cli/process/exe_alloc.h): only `status` is left to offer. */
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
    struct inj_target_status st;
    if (inj_target_status(pid, &st) == 0 && st.seccomp == 2) {
        fprintf(stderr,
                "heapinject: pid %d (%s): no census: the process runs under a seccomp filter, which may forbid "
                "the fork a census takes; nothing was attached. 'heapinject status -p %d' still shows where "
                "its resident bytes are\n",
                (int)pid, comm, (int)pid);
        return CLI_EXIT_UNSUPPORTED;
    }
    int uffd = cli_census_uffd_fork_fd(pid);
    if (uffd >= 0) {
        fprintf(stderr,
                "heapinject: pid %d (%s): no census: the process has a userfaultfd (descriptor %d) with "
                "UFFD_FEATURE_EVENT_FORK: the census's fork would send its monitor a fork event and hold the "
                "program until it is read; nothing was attached\n",
                (int)pid, comm, uffd);
        return CLI_EXIT_UNSUPPORTED;
    }
    return CLI_EXIT_OK;
}
