/* procmaps.c - protection lookup in the calling thread's /proc maps; the agent thread's own /proc directory. */
#include "payload/sys/procmaps.h"
#include "payload/sys/fmt.h"
#include "payload/sys/seccomp_watch.h"
#include "common/maps_line.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The agent thread's own /proc directory (pl_proc_own_start); agent
 * thread only, which own_here marks (a census copy is made by a clone of
 * the agent thread and keeps its TLS, but reads its /proc files itself,
 * never through here). */
static char own_dir[40];
static __thread int own_here __attribute__((tls_model("initial-exec")));

/* Parses one maps line (common/maps_line.c) into its range, protection
 * and whether it is anonymous: inode 0 and no path, or a name the kernel
 * or the program gave anonymous memory ("[anon:...]" from
 * PR_SET_VMA_ANON_NAME). 0 or -1. */
static int parse_line(const char *line, size_t len, uintptr_t *lo, uintptr_t *hi, int *prot, int *anon)
{
    struct hi_maps_line m;
    if (!hi_maps_line_parse(line, line + len, &m))
        return -1;
    *lo = (uintptr_t)m.start;
    *hi = (uintptr_t)m.end;
    *prot = (m.perms[0] == 'r' ? PROT_READ : 0) | (m.perms[1] == 'w' ? PROT_WRITE : 0) |
            (m.perms[2] == 'x' ? PROT_EXEC : 0);
    *anon = m.inode == 0 && (!m.path || (m.pathlen >= 6 && memcmp(m.path, "[anon:", 6) == 0));
    return 0;
}

int pl_proc_open_self(const char *name)
{
    char path[64] = "/proc/thread-self/";
    size_t n = strlen(path), m = strlen(name);
    if (n + m >= sizeof(path))
        return -ENAMETOOLONG;
    memcpy(path + n, name, m + 1);
    /* A seccomp filter installed after attach may forbid openat. */
    if (!pl_seccomp_recheck(HI_GATE_PROC))
        return -EPERM;
    if (own_here)
        return pl_proc_own_open(name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
        return fd >= 0 ? fd : -errno;
    memcpy(path, "/proc/self/", 11);
    memcpy(path + 11, name, m + 1);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* own_dir/name into path (NUL-terminated, cut short if too long: then it
 * opens nothing). */
static void own_path(char *path, size_t len, const char *name)
{
    struct pl_buf b;
    pl_buf_init(&b, path, len);
    pl_buf_str(&b, own_dir);
    pl_buf_str(&b, "/");
    pl_buf_str(&b, name);
}

int pl_proc_own_open(const char *name)
{
    char path[96];
    own_path(path, sizeof(path), name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* Writes comm into DIR/comm: whether it took. The kernel takes it only
 * for a thread of the writer's own thread group. */
static int write_comm_in(const char *dir, const char *comm)
{
    char path[96];
    struct pl_buf b;
    pl_buf_init(&b, path, sizeof(path));
    pl_buf_str(&b, dir);
    pl_buf_str(&b, "/comm");
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = strlen(comm);
    int ok = write(fd, comm, n) == (ssize_t)n;
    close(fd);
    return ok;
}

static int write_comm(const char *comm)
{
    return write_comm_in(own_dir, comm);
}

int pl_proc_name_self(const char *comm)
{
    char dir[40];
    struct pl_buf b;
    pl_buf_init(&b, dir, sizeof(dir));
    pl_buf_str(&b, "/proc/");
    pl_buf_u64(&b, (uint64_t)syscall(SYS_gettid));
    if (write_comm_in(dir, comm))
        return 1;
    /* Another pid namespace's /proc: that TID is not ours (the write
     * did not take there). */
    pl_buf_init(&b, dir, sizeof(dir));
    pl_buf_str(&b, "/proc/self/task/");
    pl_buf_u64(&b, (uint64_t)syscall(SYS_gettid));
    return write_comm_in(dir, comm);
}

/* Whether status text s has the line "KEY:\tVALUE" with nothing more on
 * it (key given with its leading newline, but for the first line). */
static int line_is(const char *s, const char *key, const char *value)
{
    const char *p = strstr(s, key);
    if (!p)
        return 0;
    p += strlen(key);
    while (*p == '\t' || *p == ' ')
        p++;
    size_t n = strlen(value);
    return strncmp(p, value, n) == 0 && p[n] == '\n';
}

/* Whether own_dir's status is this thread's: its name just written, this
 * tid and pid, each the only one on its NSpid/NStgid line (the task is in
 * the /proc mount's pid namespace, which then is ours: our numbers are
 * its numbers). */
static int status_is_ours(const char *tid, const char *pid, const char *comm)
{
    char buf[4096];
    int fd = pl_proc_own_open("status");
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strncmp(buf, "Name:", 5) == 0 && line_is(buf, "Name:", comm) && line_is(buf, "\nPid:", tid) &&
           line_is(buf, "\nTgid:", pid) && line_is(buf, "\nNSpid:", tid) && line_is(buf, "\nNStgid:", pid);
}

int pl_proc_own_start(const char *comm)
{
    char tid[24], pid[24];
    struct pl_buf b;
    pl_buf_init(&b, tid, sizeof(tid));
    pl_buf_u64(&b, (uint64_t)syscall(SYS_gettid));
    pl_buf_init(&b, pid, sizeof(pid));
    pl_buf_u64(&b, (uint64_t)getpid());
    own_here = 1;
    pl_buf_init(&b, own_dir, sizeof(own_dir));
    pl_buf_str(&b, "/proc/");
    pl_buf_str(&b, tid);
    /* Another namespace's /proc/TID is another task: the name does not
     * take there (EINVAL), and its status does not pass. */
    if (write_comm(comm) && status_is_ours(tid, pid, comm))
        return 1;
    pl_buf_init(&b, own_dir, sizeof(own_dir));
    pl_buf_str(&b, "/proc/self/task/");
    pl_buf_str(&b, tid);
    write_comm(comm);
    return 0;
}

int pl_proc_own_start_forked(const char *comm)
{
    static const char fallback[] = "/proc/self/task/";
    if (!own_dir[0])
        return pl_proc_own_start(comm);
    /* The parent agent's finding, in its copy of our memory: same /proc
     * mount, same pid namespace (fork makes no new one). */
    int tid_form = strncmp(own_dir, fallback, sizeof(fallback) - 1) != 0;
    struct pl_buf b;
    own_here = 1;
    pl_buf_init(&b, own_dir, sizeof(own_dir));
    pl_buf_str(&b, tid_form ? "/proc/" : fallback);
    pl_buf_u64(&b, (uint64_t)syscall(SYS_gettid));
    write_comm(comm);
    return tid_form;
}

/* Calls fn(arg, lo, hi, prot, anon) for each line of the calling thread's
 * maps, in address order, until fn returns non-zero. 0 when fn stopped
 * the walk, -ENOENT when it never did, or -errno from open/read. */
static int maps_walk(int (*fn)(void *, uintptr_t, uintptr_t, int, int), void *arg)
{
    char buf[4096];
    size_t have = 0;
    int fd = pl_proc_open_self("maps");
    if (fd < 0)
        return fd;
    int ret = -ENOENT;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof(buf) - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ret = -errno;
            break;
        }
        have += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] != '\n')
                continue;
            uintptr_t lo, hi;
            int pr, an;
            if (parse_line(buf + start, i - start, &lo, &hi, &pr, &an) == 0 && fn(arg, lo, hi, pr, an)) {
                ret = 0;
                goto out;
            }
            start = i + 1;
        }
        if (r == 0)
            break;
        /* keep the partial last line; a line longer than the buffer (a
         * huge path) is cut, its first bytes still parse */
        if (start == 0 && have == sizeof(buf))
            start = have;
        memmove(buf, buf + start, have - start);
        have -= start;
    }
out:
    close(fd);
    return ret;
}

struct one_addr {
    uintptr_t addr, range[2];
    int prot, anon;
};

static int holds_addr(void *arg, uintptr_t lo, uintptr_t hi, int prot, int anon)
{
    struct one_addr *a = arg;
    if (a->addr < lo || a->addr >= hi)
        return 0;
    a->range[0] = lo;
    a->range[1] = hi;
    a->prot = prot;
    a->anon = anon;
    return 1;
}

static int scan(uintptr_t addr, int *prot, int *anon, uintptr_t *range)
{
    struct one_addr a = { .addr = addr };
    int r = maps_walk(holds_addr, &a);
    if (r == 0) {
        *prot = a.prot;
        *anon = a.anon;
        range[0] = a.range[0];
        range[1] = a.range[1];
    }
    return r;
}

struct many_pages {
    const uintptr_t *pages;
    signed char *prot;
    size_t n, next;
};

/* The maps' lines come in address order, the pages too: one pass. */
static int holds_pages(void *arg, uintptr_t lo, uintptr_t hi, int prot, int anon)
{
    (void)anon;
    struct many_pages *m = arg;
    while (m->next < m->n && m->pages[m->next] < lo)
        m->next++; /* in no mapping: stays -1 */
    while (m->next < m->n && m->pages[m->next] < hi)
        m->prot[m->next++] = (signed char)prot;
    return m->next >= m->n;
}

int pl_maps_prot_pages(const uintptr_t *pages, size_t n, signed char *prot)
{
    struct many_pages m = { pages, prot, n, 0 };
    for (size_t i = 0; i < n; i++)
        prot[i] = -1;
    if (!n)
        return 0;
    int r = maps_walk(holds_pages, &m);
    return r == -ENOENT ? 0 : r;
}

int pl_maps_prot(uintptr_t addr, int *prot)
{
    int anon;
    uintptr_t range[2];
    return scan(addr, prot, &anon, range);
}

int pl_maps_anon(uintptr_t addr)
{
    int prot, anon;
    uintptr_t range[2];
    return scan(addr, &prot, &anon, range) == 0 && anon;
}

int pl_maps_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    int prot, anon;
    uintptr_t range[2];
    int r = scan(addr, &prot, &anon, range);
    if (r == 0 && !(prot & PROT_READ))
        r = -EACCES;
    if (r == 0) {
        *lo = range[0];
        *hi = range[1];
    }
    return r;
}
