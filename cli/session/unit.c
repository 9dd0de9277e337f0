/* unit.c - a systemd unit's cgroup directory (unit.h). */
#include "cli/session/unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cli/util/exitcode.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Deeper than any systemd layout (a user's unit is 5 levels down). */
#define UNIT_MAX_DEPTH 12
#define UNIT_MAX_SHOWN 8

struct unit_walk {
    const char *want[2];     /* the names a match may have */
    char found[UNIT_MAX_SHOWN][4096];
    size_t nfound;           /* matches, counted past UNIT_MAX_SHOWN too */
};

static bool is_cgroup2(const char *dir)
{
    struct statfs fs;
    return statfs(dir, &fs) == 0 && (unsigned long)fs.f_type == (unsigned long)CGROUP2_SUPER_MAGIC;
}

/* Directories only: a cgroup's files (cgroup.procs, memory.max, ...) are
 * never units. A directory that cannot be opened is passed over. */
static void walk(int fd, char *path, size_t plen, size_t cap, int depth, struct unit_walk *w)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
        size_t nl = strlen(e->d_name);
        if (plen + 1 + nl + 1 > cap)
            continue;
        path[plen] = '/';
        memcpy(path + plen + 1, e->d_name, nl + 1);
        if ((w->want[0] && !strcmp(e->d_name, w->want[0])) || (w->want[1] && !strcmp(e->d_name, w->want[1]))) {
            if (w->nfound < UNIT_MAX_SHOWN)
                snprintf(w->found[w->nfound], sizeof(w->found[0]), "%s", path);
            w->nfound++;
            /* A unit's own sub-cgroups are not other units of its name. */
            continue;
        }
        if (depth + 1 >= UNIT_MAX_DEPTH)
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            walk(sub, path, plen + 1 + nl, cap, depth + 1, w);
    }
    path[plen] = '\0';
    closedir(d);
}

/* A unit name has a type suffix (nginx.service, session-3.scope); a bare
 * name is taken as a service, as systemctl does. */
static bool has_unit_suffix(const char *name)
{
    static const char *const types[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        size_t tl = strlen(types[i]);
        if (n > tl && !strcmp(name + n - tl, types[i]))
            return true;
    }
    return false;
}

int cli_unit_cgroup(const char *name, char *path, size_t len)
{
    static struct unit_walk w; /* the found paths are large: not on the stack */
    char service[512];
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > 255) {
        fprintf(stderr, "heapinject: --unit '%s' is not a unit name (examples: nginx, nginx.service; for a "
                        "cgroup directory use --cgroup PATH)\n", name);
        return CLI_EXIT_USAGE;
    }
    /* v2 alone at /sys/fs/cgroup, or beside v1 at its unified/ (whose
     * v1 hierarchies hold directories of the same names: not walked). */
    const char *root = is_cgroup2("/sys/fs/cgroup")           ? "/sys/fs/cgroup"
                       : is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified"
                                                              : NULL;
    if (!root) {
        fprintf(stderr, "heapinject: --unit %s: no cgroup v2 hierarchy at /sys/fs/cgroup or "
                        "/sys/fs/cgroup/unified, where systemd keeps its units' processes\n", name);
        return CLI_EXIT_NOPROC;
    }
    memset(&w, 0, sizeof(w));
    w.want[0] = name;
    if (!has_unit_suffix(name)) {
        snprintf(service, sizeof(service), "%s.service", name);
        w.want[1] = service;
    }
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", root);
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        walk(fd, buf, strlen(buf), sizeof(buf), 0, &w);
    if (w.nfound == 0) {
        fprintf(stderr, "heapinject: --unit %s: no such unit running: no cgroup directory named %s%s%s under %s "
                        "(a unit that is stopped has none)\n", name, name, w.want[1] ? " or " : "",
                w.want[1] ? w.want[1] : "", root);
        return CLI_EXIT_NOPROC;
    }
    if (w.nfound > 1) {
        fprintf(stderr, "heapinject: --unit %s: %zu cgroups match; name one with --cgroup PATH:\n", name, w.nfound);
        for (size_t i = 0; i < w.nfound && i < UNIT_MAX_SHOWN; i++)
            fprintf(stderr, "  %s\n", w.found[i]);
        if (w.nfound > UNIT_MAX_SHOWN)
            fprintf(stderr, "  ... and %zu more\n", w.nfound - UNIT_MAX_SHOWN);
        return CLI_EXIT_USAGE;
    }
    if (strlen(w.found[0]) >= len) {
        fprintf(stderr, "heapinject: --unit %s: its cgroup path is too long\n", name);
        return CLI_EXIT_FAILURE;
    }
    snprintf(path, len, "%s", w.found[0]);
    return 0;
}
