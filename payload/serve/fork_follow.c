/* fork_follow.c - whether and how a fork child gets its own session (see
 * fork_follow.h). Everything here runs in the child's atfork handler or
 * under the start lock: loads, stores and getpid, no lock, no allocation. */
#include "payload/serve/fork_follow.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "payload/record/record.h"
#include "payload/sys/sys.h"

static struct hi_config pl_follow_cfg; /* start lock */
static pid_t pl_follow_pid;            /* the process pl_follow_cfg is for */
static int pl_follow_named;            /* the socket is "<pl_follow_pid>.sock" */
static pid_t pl_follow_owner;          /* agent (atomic) */
static uint32_t pl_follow_forks;       /* forks in the parent since the start (atomic) */
/* The dynamic linker's state (ld.so's _rtld_global), where its locks are
 * (start lock; NULL: not found, no child is followed). */
static const unsigned char *pl_rtld;
static size_t pl_rtld_size;

/* Finds _rtld_global and its size (dladdr1's symbol). */
static void find_rtld(void)
{
    if (pl_rtld)
        return;
    void *p = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (p && dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size >= 64 &&
        sym->st_size <= (1u << 16)) {
        pl_rtld_size = sym->st_size;
        pl_rtld = p;
    }
}

/* Whether the child inherited one of the dynamic linker's locks held: a
 * recursive pthread mutex (glibc's __rtld_lock_recursive_t: __lock,
 * __count, __owner, __nusers, __kind = PTHREAD_MUTEX_RECURSIVE_NP: the
 * loader's locks are initialized statically, no elision flag) whose lock
 * word is set, anywhere in _rtld_global. glibc's fork resets
 * dl_load_lock in the child but not dl_load_write_lock, which
 * dl_iterate_phdr takes (our stack walk's unwind tables, the agent's check
 * for new modules, a C++ throw), nor, in versions whose fork resets only
 * dl_load_lock (a later glibc resets it too), dl_load_tls_lock
 * (pthread_create). A parent thread inside one at the fork leaves it held
 * for good in the child: its session would hang there, so it gets none.
 * Scanned by layout, not by offset (they move between versions); a word
 * that only looks like a held lock costs a child its profiler, nothing
 * more. Reads of ld.so's data pages: nothing is copied. */
static int loader_lock_held(void)
{
    const unsigned char *p = pl_rtld;
    /* Held is the lock word alone: a thread caught between its unlock's
     * count going 0 and its lock word going 0 left {1, 0, owner} (found
     * hung that way: a test of the count missed it). The rest only keeps
     * other words out: pthread_mutex_t is 8-aligned, count and users are
     * small, the owner 0 or a tid (at most pid_max, 2^22); pointers in
     * _rtld_global passed a looser test (the kind's low bits) and refused
     * every child. */
    for (size_t off = 0; off + 5 * sizeof(int) <= pl_rtld_size; off += 8) {
        int w[5];
        memcpy(w, p + off, sizeof(w));
        if (w[0] != 0 && w[1] >= 0 && w[1] < 65536 && w[2] >= 0 && w[2] <= (1 << 22) && w[3] >= 0 &&
            w[3] < 65536 && w[4] == PTHREAD_MUTEX_RECURSIVE_NP)
            return 1;
    }
    return 0;
}

int pl_follow_loader_busy(void)
{
    return !pl_rtld || loader_lock_held();
}

/* Decimal digits of v into buf (no NUL); their count. */
static size_t put_u32(char *buf, uint32_t v)
{
    char d[10];
    size_t n = 0, k = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        buf[k++] = d[--n];
    return k;
}

/* The offset of the file name in path, or -1 if it is not "<pid>.sock". */
static long name_at(const char *path, pid_t pid)
{
    const char *slash = strrchr(path, '/');
    char want[16];
    if (!slash)
        return -1;
    size_t n = put_u32(want, (uint32_t)pid);
    memcpy(want + n, ".sock", 6);
    return strcmp(slash + 1, want) == 0 ? (long)(slash + 1 - path) : -1;
}

void pl_follow_remember(const struct hi_config *cfg)
{
    pl_follow_cfg = *cfg;
    pl_follow_pid = pl_raw_getpid();
    pl_follow_named = cfg->follow && name_at(cfg->sock, pl_follow_pid) >= 0;
    if (pl_follow_named)
        find_rtld();
    __atomic_store_n(&pl_follow_owner, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_follow_forks, 0, __ATOMIC_RELAXED);
}

void pl_follow_set_owner(pid_t pid)
{
    __atomic_store_n(&pl_follow_owner, pid, __ATOMIC_RELAXED);
}

PL_FORK_TEXT int pl_follow_wanted(void)
{
    /* Detached (the common case after a session): one load, no write. */
    if (!pl_follow_cfg.follow || pl_state_get() != PL_RUNNING)
        return 0;
    /* The key is off once a seccomp filter sealed the session, or while it
     * stops: the hooks are not live, nothing to follow. */
    if (pl_key_load() == PL_KEY_OFF || pl_seccomp_sealed())
        return 0;
    /* fork() from a signal handler that interrupted one of our hooks, or
     * from our own code: our tables may be half written. */
    if (pl_tls.guard || pl_tls.dead == PL_TLS_AGENT)
        return 0;
    /* Only in a child of the process the settings are for, and not with a
     * lock of the loader held by a thread that is gone. */
    return pl_follow_named && pl_raw_getpid() != pl_follow_pid && pl_rtld && !loader_lock_held();
}

int pl_follow_child_config(struct hi_config *out)
{
    *out = pl_follow_cfg;
    long at = name_at(pl_follow_cfg.sock, pl_follow_pid);
    if (at < 0)
        return -1;
    char name[16];
    size_t n = put_u32(name, (uint32_t)pl_raw_getpid());
    memcpy(name + n, ".sock", 6);
    if ((size_t)at + n + 6 > sizeof(out->sock) || (size_t)at + n + 5 > HI_SOCK_PATH_MAX)
        return -1;
    memcpy(out->sock + at, name, n + 6);
    out->rate = __atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED);
    pid_t owner = __atomic_load_n(&pl_follow_owner, __ATOMIC_RELAXED);
    if (owner > 0) {
        out->cli_pid = (uint32_t)owner;
    } else if (pl_follow_cfg.ttl_s) {
        /* Unowned (`attach`): the child leaves when its parent's session
         * would, not a whole ttl later. */
        uint64_t used_s = (pl_now_ns() - pl_attach_ns) / 1000000000ull;
        out->ttl_s = used_s + 1 < pl_follow_cfg.ttl_s ? pl_follow_cfg.ttl_s - used_s : 1;
    }
    return 0;
}

void pl_follow_atfork_parent(void)
{
    /* Detached or not following: a load only. */
    if (pl_follow_cfg.follow && pl_state_get() == PL_RUNNING)
        __atomic_store_n(&pl_follow_forks, 1, __ATOMIC_RELAXED);
}

/* getdents64's record (opendir would malloc). */
struct pl_dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* The pid of "<digits>.sock", else 0. */
static pid_t sock_pid(const char *name)
{
    uint64_t v = 0;
    const char *p = name;
    while (*p >= '0' && *p <= '9' && v < 0x7fffffff)
        v = v * 10 + (uint64_t)(*p++ - '0');
    return p != name && strcmp(p, ".sock") == 0 && v <= 0x7fffffff ? (pid_t)v : 0;
}

/* Whether nobody listens on the socket at dir/name (ECONNREFUSED). */
static int refused(const char *dir, size_t dlen, const char *name)
{
    struct sockaddr_un sa;
    size_t nlen = strlen(name);
    if (dlen + 1 + nlen >= sizeof(sa.sun_path))
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, dir, dlen);
    sa.sun_path[dlen] = '/';
    memcpy(sa.sun_path + dlen + 1, name, nlen + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 0;
    int r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno == ECONNREFUSED;
    close(fd);
    return r;
}

void pl_follow_sweep(void)
{
    if (!pl_follow_named || !__atomic_load_n(&pl_follow_forks, __ATOMIC_RELAXED) || pl_seccomp_sealed())
        return;
    char dir[sizeof(pl_follow_cfg.sock)];
    const char *slash = strrchr(pl_follow_cfg.sock, '/');
    size_t dlen = slash ? (size_t)(slash - pl_follow_cfg.sock) : 0;
    if (dlen == 0)
        return;
    memcpy(dir, pl_follow_cfg.sock, dlen);
    dir[dlen] = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            struct pl_dirent64 *e = (struct pl_dirent64 *)(buf + off);
            off += e->reclen;
            pid_t pid = sock_pid(e->name);
            struct stat st;
            if (pid <= 0 || pid == pl_raw_getpid() || kill(pid, 0) == 0 || errno != ESRCH)
                continue;
            if (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
                st.st_uid == geteuid() && refused(dir, dlen, e->name))
                unlinkat(dfd, e->name, 0);
        }
    }
    close(dfd);
}
