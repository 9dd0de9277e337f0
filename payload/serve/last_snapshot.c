/* last_snapshot.c - the snapshot a process leaves when it ends (see
 * last_snapshot.h and common/last_snapshot.h). */
#include "payload/serve/last_snapshot.h"

#include <dirent.h> /* DT_* only: no DIR stream (opendir mallocs) */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h> /* rename(2) only: no stream is used */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/last_snapshot.h"
#include "common/proto.h"
#include "payload/record/record.h"
#include "payload/serve/last_keep.h"
#include "payload/serve/maps_cache.h"
#include "payload/serve/snapshot.h"
#include "payload/sys/sys.h"

/* Start lock writes them; the exit handler and the agent read. */
static struct {
    int enabled;
    pid_t pid;                         /* the process whose session it is */
    char path[HI_SOCK_PATH_MAX + 8];   /* .../PID.last */
    void (*wake)(void);
    /* A followed child's session (pl_last_child_session); NULL otherwise. */
    uint32_t (*child_samples)(void);
    void (*child_unlink_socket)(void);
    int (*child_no_agent)(void);
    uint64_t started_ns;
    uint64_t start_ticks; /* a followed child's, from the fork's clock (0: unknown) */
} pl_last;

static uint64_t pl_fork_before_ns; /* CLOCK_BOOTTIME before the last fork (pl_last_fork_prepare) */

/* Futex word: 0 nothing, 1 an exiting thread waits, 2 the file is done. */
static int pl_last_word;
static int pl_last_status;  /* written before the word goes 1 */
static int pl_last_busy;    /* one exiting thread waits (atomic) */

static void last_on_exit(int status, void *arg);

/* PID.last.tmp into tmp (sizeof(pl_last.path) + 4 bytes). */
static const char *tmp_name(char *tmp)
{
    size_t n = strlen(pl_last.path);
    memcpy(tmp, pl_last.path, n);
    memcpy(tmp + n, ".tmp", 5);
    return tmp;
}

void pl_last_remember(const struct hi_config *cfg, void (*wake)(void))
{
    static int registered; /* start lock */
    size_t n = strlen(cfg->sock), sl = strlen(".sock");
    pl_last.enabled = 0;
    pl_last.wake = wake;
    pl_last.child_samples = NULL;
    pl_last.child_unlink_socket = NULL;
    pl_last.child_no_agent = NULL;
    pl_last.started_ns = pl_now_ns();
    pl_last.start_ticks = 0;
    pl_last.pid = pl_raw_getpid();
    __atomic_store_n(&pl_last_word, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_last_busy, 0, __ATOMIC_RELEASE);
    if (!cfg->last || n <= sl || strcmp(cfg->sock + n - sl, ".sock") != 0)
        return;
    memcpy(pl_last.path, cfg->sock, n - sl);
    memcpy(pl_last.path + n - sl, HI_LAST_SUFFIX, sizeof(HI_LAST_SUFFIX));
    /* on_exit, not atexit: it gives the status. Handlers run last
     * registered first: ours before the program's registered earlier,
     * whose allocations are then not in the file. The library is never
     * unloaded (-z nodelete), so the handler stays valid. */
    if (!registered)
        registered = on_exit(last_on_exit, NULL) == 0;
    pl_last.enabled = registered;
}

void pl_last_forget(void)
{
    char tmp[sizeof(pl_last.path) + 4];
    if (pl_last.enabled && !pl_seccomp_sealed())
        pl_last_keep_drop(tmp_name(tmp));
}

void pl_last_fork_prepare(void)
{
    __atomic_store_n(&pl_fork_before_ns, pl_boottime_ns(), __ATOMIC_RELAXED);
}

/* The kernel's start time: nanoseconds of CLOCK_BOOTTIME over 1 s / USER_HZ
 * (sysconf's value comes from the auxiliary vector: no call). */
static uint64_t fork_start_ticks(void)
{
    uint64_t before = __atomic_load_n(&pl_fork_before_ns, __ATOMIC_RELAXED), after = pl_boottime_ns();
    long hz = sysconf(_SC_CLK_TCK);
    if (!before || hz <= 0 || after < before)
        return 0;
    uint64_t tick = 1000000000ull / (uint64_t)hz;
    return before / tick == after / tick ? after / tick : 0;
}

uint64_t pl_last_child_start_ticks(void)
{
    return pl_last.start_ticks;
}

void pl_last_child_session(uint32_t (*samples)(void), void (*unlink_socket)(void), int (*no_agent)(void))
{
    pl_last.start_ticks = fork_start_ticks();
    pl_last.child_samples = samples;
    pl_last.child_unlink_socket = unlink_socket;
    pl_last.child_no_agent = no_agent;
    /* A worker may become another user after its fork (last_keep.h). */
    char tmp[sizeof(pl_last.path) + 4];
    if (pl_last.enabled)
        pl_last_keep_open(tmp_name(tmp));
}

/* A followed child with nothing sampled that lived too briefly to be seen:
 * its file would be an empty report. */
static int child_not_worth_a_file(void)
{
    return pl_last.child_samples && pl_last.child_samples() == 0 &&
           pl_now_ns() - pl_last.started_ns < PL_LAST_CHILD_SEEN_MS * 1000000ull;
}

int pl_last_enabled(void)
{
    return pl_last.enabled && pl_raw_getpid() == pl_last.pid;
}

static long futex(int *word, int op, int val, const struct timespec *ts)
{
    return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

/* Runs on the thread that called exit(), other threads still running. Not
 * in a fork child whose session is not its own (pid), not inside our own
 * code (guard), not on the agent, not when no session runs. */
static void last_on_exit_running(int status);

/* Registered for good: after a detach, in every process that exits (a fork
 * child's exit() too), only this test runs, on the fork children's text
 * page (fork_text.h). */
PL_FORK_TEXT static void last_on_exit(int status, void *arg)
{
    (void)arg;
    if (pl_state_get() == PL_RUNNING)
        last_on_exit_running(status);
}

static void last_on_exit_running(int status)
{
    struct pl_tls *t = &pl_tls;
    /* Memory first, getpid last: the handler stays registered after
     * detach, and a thread that exits under a seccomp filter installed
     * after attach (which may kill getpid) must meet no call of ours
     * (issue 25; hooks barred: no session worth a file either). */
    if (pl_state_get() != PL_RUNNING || pl_seccomp_hooks_barred() || t->guard || t->dead == PL_TLS_AGENT ||
        !pl_last_enabled() || __atomic_exchange_n(&pl_last_busy, 1, __ATOMIC_ACQ_REL))
        return;
    /* A lazy child's agent never started (lazy_agent.h): claimed now, so
     * none starts under us. */
    int no_agent = pl_last.child_no_agent ? pl_last.child_no_agent() : 0;
    if (no_agent == 2 || child_not_worth_a_file()) {
        if (!no_agent)
            pl_last.child_unlink_socket();
        char tmp[sizeof(pl_last.path) + 4];
        pl_last_keep_drop(tmp_name(tmp));
        return;
    }
    if (no_agent) {
        /* Written here, by this thread, inside the guard: nothing of ours
         * it calls is sampled; the other threads go on sampling, as they
         * do while an agent writes. No wait for anybody. */
        uint64_t k = pl_guard_enter(t);
        pl_last_write(HI_LAST_EXIT, status);
        pl_guard_leave(t, k);
        return;
    }
    pl_last_status = status;
    __atomic_store_n(&pl_last_word, 1, __ATOMIC_RELEASE);
    pl_last.wake();
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += PL_LAST_WAIT_MS / 1000;
    end.tv_nsec += (long)(PL_LAST_WAIT_MS % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L)
        end.tv_sec++, end.tv_nsec -= 1000000000L;
    /* In slices: a detach that began meanwhile ends the agent's loop, and
     * nobody would write the file. */
    while (__atomic_load_n(&pl_last_word, __ATOMIC_ACQUIRE) == 1 && pl_state_get() == PL_RUNNING) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        struct timespec rel = { end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec };
        if (rel.tv_nsec < 0)
            rel.tv_sec--, rel.tv_nsec += 1000000000L;
        if (rel.tv_sec < 0)
            break;
        if (rel.tv_sec > 0 || rel.tv_nsec > 50000000L)
            rel = (struct timespec){ 0, 50000000L };
        futex(&pl_last_word, FUTEX_WAIT_PRIVATE, 1, &rel);
    }
    /* Given up or done: the agent finds the word 0 and sends nothing more. */
    __atomic_store_n(&pl_last_word, 0, __ATOMIC_RELEASE);
}

int pl_last_exit_pending(int *status)
{
    if (__atomic_load_n(&pl_last_word, __ATOMIC_ACQUIRE) != 1)
        return 0;
    *status = pl_last_status;
    return 1;
}

void pl_last_done(void)
{
    int one = 1;
    if (__atomic_compare_exchange_n(&pl_last_word, &one, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        futex(&pl_last_word, FUTEX_WAKE_PRIVATE, 1, NULL);
}

struct file_out {
    int fd;
    uint64_t bytes; /* after the header */
};

static int write_all(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t w = write(fd, c, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        c += w;
        len -= (size_t)w;
    }
    return 0;
}

/* pl_send_fn: one record, framed as on the socket: header and body in
 * one writev (a followed backend's file is ~20 records). */
static int file_send(void *ctx, uint16_t type, const void *body, uint32_t len)
{
    struct file_out *o = ctx;
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, len };
    if (sizeof(struct hi_last_header) + o->bytes + sizeof(h) + len > HI_LAST_MAX_BYTES)
        return -EFBIG;
    struct iovec v[2] = { { &h, sizeof(h) }, { (void *)body, len } };
    size_t want = sizeof(h) + len;
    ssize_t w;
    do
        w = writev(o->fd, v, len ? 2 : 1);
    while (w < 0 && errno == EINTR);
    int err = w < 0 ? -errno : 0;
    /* Short (a full disk, a signal): the rest as plain writes. */
    if (!err && (size_t)w < want) {
        size_t done = (size_t)w;
        if (done < sizeof(h))
            err = write_all(o->fd, (const char *)&h + done, sizeof(h) - done), done = sizeof(h);
        if (!err)
            err = write_all(o->fd, (const char *)body + (done - sizeof(h)), want - done);
    }
    o->bytes += want;
    return err;
}

/* Field 22 of /proc/self/stat (after the parenthesized comm, which may
 * hold anything): 0 if unreadable. */
static uint64_t start_ticks(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = NULL;
    for (ssize_t i = n - 1; i >= 0; i--)
        if (buf[i] == ')') {
            p = buf + i + 1;
            break;
        }
    /* After ')': state is field 3; starttime is field 22: 20 spaces on. */
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ')
            field++;
    uint64_t v = 0;
    while (p && *p >= '0' && *p <= '9')
        v = v * 10 + (uint64_t)(*p++ - '0');
    return v;
}

/* getdents64's record (the libc has no wrapper that does not allocate:
 * opendir mallocs). */
struct pl_dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static int is_last_name(const char *name)
{
    size_t n = strlen(name), sl = sizeof(HI_LAST_SUFFIX) - 1;
    if (n <= sl || strcmp(name + n - sl, HI_LAST_SUFFIX) != 0)
        return 0;
    for (size_t i = 0; i < n - sl; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return 1;
}

/* At most HI_LAST_MAX_FILES - 1 last snapshots stay in the directory (a
 * server that recycles its workers under a long `attach` would otherwise
 * fill a tmpfs /tmp with them): at the bound, the oldest go, down to
 * LAST_KEEP_AFTER_PRUNE. Below it, a look is one listing (getdents64 with
 * each entry's type); the files' times are read only when some must go,
 * one exit in four in the steady state of a server whose backends come
 * and go (each exit used to fstatat all 16, 0.08 ms of every followed
 * child's end). Best effort. */
#define LAST_KEEP_AFTER_PRUNE (HI_LAST_MAX_FILES * 3 / 4)
#define LAST_PRUNE_SEEN 64 /* files ranked by age in one prune */

struct last_file {
    int64_t mtime_ns;
    char name[24]; /* PID.last */
};

/* Calls fn(dfd, name, arg) for each regular PID.last file of the
 * directory open at dfd (d_type; lstat when the file system gives none);
 * returns how many there are. */
static unsigned each_last_file(int dfd, void (*fn)(int, const char *, void *), void *arg)
{
    char buf[4096];
    unsigned count = 0;
    long n;
    if (lseek(dfd, 0, SEEK_SET) != 0)
        return 0;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            struct pl_dirent64 *e = (struct pl_dirent64 *)(buf + off);
            off += e->reclen;
            struct stat st;
            if (!is_last_name(e->name) || (e->type != DT_REG && e->type != DT_UNKNOWN) ||
                (e->type == DT_UNKNOWN &&
                 (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))))
                continue;
            count++;
            if (fn)
                fn(dfd, e->name, arg);
        }
    }
    return count;
}

struct prune_list {
    struct last_file f[LAST_PRUNE_SEEN];
    unsigned n;
};

static void rank_by_age(int dfd, const char *name, void *arg)
{
    struct prune_list *l = arg;
    struct stat st;
    size_t len = strlen(name);
    if (l->n == LAST_PRUNE_SEEN || len >= sizeof(l->f[0].name) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    l->f[l->n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
    memcpy(l->f[l->n].name, name, len + 1);
    l->n++;
}

void pl_last_make_room_in(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    unsigned count = each_last_file(dfd, NULL, NULL);
    if (count >= HI_LAST_MAX_FILES) {
        static struct prune_list l; /* one writer at a time (pl_last_busy) */
        l.n = 0;
        each_last_file(dfd, rank_by_age, &l);
        /* Oldest first, by selection (no qsort: glibc's may malloc). */
        for (unsigned i = 0; i < l.n && count > LAST_KEEP_AFTER_PRUNE; i++) {
            unsigned old = i;
            for (unsigned j = i + 1; j < l.n; j++)
                if (l.f[j].mtime_ns < l.f[old].mtime_ns)
                    old = j;
            struct last_file tmp = l.f[i];
            l.f[i] = l.f[old];
            l.f[old] = tmp;
            if (unlinkat(dfd, l.f[i].name, 0) == 0)
                count--;
        }
    }
    close(dfd);
}

static void make_room(void)
{
    char dir[sizeof(pl_last.path)];
    memcpy(dir, pl_last.path, sizeof(dir));
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    pl_last_make_room_in(dir);
}

int pl_last_write(unsigned how, int code)
{
    if (!pl_last.enabled || pl_seccomp_sealed())
        return -EPERM;
    char tmp[sizeof(pl_last.path) + 4];
    tmp_name(tmp);
    make_room();
    /* Opened at the start (last_keep.h: root, which the process may no
     * longer be), else now. */
    int kept = pl_last_keep_take(), fd = kept;
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
        close(fd);
        fd = kept = -1;
    }
    if (fd < 0) {
        unlink(tmp); /* ours from an earlier try: the directory is 0700, ours */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd < 0)
        return -errno;
    struct hi_last_header h;
    struct timespec rt;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, HI_LAST_MAGIC, sizeof(h.magic));
    h.version = HI_PROTO_VERSION;
    h.pid = (int32_t)pl_raw_getpid();
    h.how = how;
    h.code = code;
    clock_gettime(CLOCK_REALTIME, &rt);
    h.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    h.start_ticks = pl_last.start_ticks ? pl_last.start_ticks : start_ticks();
    h.ppid = (int32_t)syscall(SYS_getppid);
    struct file_out o = { fd, 0 };
    int err = write_all(fd, &h, sizeof(h));
    if (!err) {
        /* Stacks as shared nodes, as the cli asks on the socket: the
         * file is a fraction of the SNAP_BUCKET form's size. */
        struct hi_snapshot_req req = { HI_SNAP_WANT_NODES | HI_SNAP_WANT_WALKS | HI_SNAP_WANT_RUNTIME_FRAMES, 0 };
        /* A followed child whose loader did nothing since the fork: its
         * files are where its parent's are (maps_cache.h). */
        size_t mlen = 0;
        const char *maps = pl_last.child_samples ? pl_maps_cache_current(&mlen) : NULL;
        pl_snapshot_maps_text(maps, mlen);
        pl_snapshot_at_end(true);
        err = pl_snapshot_send_req(file_send, &o, &req, sizeof(req));
        pl_snapshot_at_end(false);
        pl_snapshot_maps_text(NULL, 0);
    }
    if (!err) {
        /* The length last: a reader knows the file is whole. */
        h.snapshot_bytes = o.bytes;
        err = pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) ? 0 : -EIO;
    }
    close(fd);
    if (!err && rename(tmp, pl_last.path) != 0) {
        err = -errno;
        /* No longer the directory's user: the file stays whole under its
         * first name, which the cli takes too (last_keep.h). */
        if (kept >= 0 && (err == -EACCES || err == -EPERM))
            return 0;
    }
    if (err)
        unlink(tmp);
    return err;
}
