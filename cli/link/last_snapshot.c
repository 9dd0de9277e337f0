/* last_snapshot.c - reads the snapshot a process left when it ended (see
 * last_snapshot.h; the payload's side: payload/serve/last_snapshot.c). */
#include "cli/link/last_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/link/client.h"
#include "cli/process/paths.h"
#include "cli/process/proc.h"
#include "cli/process/slots.h"
#include "common/last_snapshot.h"
#include "common/proto.h"

/* The process's state letter and start time (field 22) from
 * /proc/PID/stat: 0, or -ENOENT when it is gone. */
static int proc_state(pid_t pid, char *state, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (cli_proc_read_small(path, buf, sizeof(buf)) <= 0)
        return -ENOENT;
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     state, start) != 2)
        return -ENOENT;
    return 0;
}

/* Opens the first PID.last of our directories for uid. */
static int open_file(pid_t pid, uid_t uid, const char *suffix, char *path, size_t pathlen)
{
    const char *fmt[] = { "/run/user/%u/heapinject/%d%s", "/tmp/heapinject-%u/%d%s" };
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, pathlen, fmt[i], (unsigned)uid, (int)pid, suffix);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0 || errno != ENOENT)
            return fd < 0 ? -errno : fd;
    }
    return -ENOENT;
}

/* Opens PID.last in the directory of another user (root's cli only): of
 * a process that ran as that user and has been reaped, which no longer
 * tells its uid. Only a file owned by the directory's user is taken (the
 * profiler in a process of that user wrote it); the newest if several. */
static int open_other_users_file(pid_t pid, const char *suffix, char *path, size_t pathlen)
{
    const struct { const char *dir, *prefix, *fmt; } where[] = {
        { "/run/user", "", "/run/user/%lu/heapinject/%d%s" },
        { "/tmp", "heapinject-", "/tmp/heapinject-%lu/%d%s" },
    };
    int best = -ENOENT;
    struct timespec best_at = { 0, 0 };
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        DIR *d = opendir(where[i].dir);
        if (!d)
            continue;
        size_t pl = strlen(where[i].prefix);
        struct dirent *e;
        while ((e = readdir(d))) {
            char *end;
            if (strncmp(e->d_name, where[i].prefix, pl) != 0 || !e->d_name[pl])
                continue;
            unsigned long uid = strtoul(e->d_name + pl, &end, 10);
            if (*end || uid == (unsigned long)geteuid())
                continue;
            char p[256];
            snprintf(p, sizeof(p), where[i].fmt, uid, (int)pid, suffix);
            int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            struct stat st;
            if (fd < 0)
                continue;
            if (fstat(fd, &st) < 0 || st.st_uid != (uid_t)uid ||
                (best >= 0 && (st.st_mtim.tv_sec < best_at.tv_sec ||
                               (st.st_mtim.tv_sec == best_at.tv_sec && st.st_mtim.tv_nsec <= best_at.tv_nsec)))) {
                close(fd);
                continue;
            }
            if (best >= 0)
                close(best);
            best = fd;
            best_at = st.st_mtim;
            snprintf(path, pathlen, "%s", p);
        }
        closedir(d);
    }
    return best;
}

static bool refuses(const char *path);

/* Removes the unix socket at sock if it is ours and refuses connections
 * (nobody listens); 1 if removed. */
static int remove_if_refused(const char *sock)
{
    struct stat st;
    return lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid() && refuses(sock) &&
           unlink(sock) == 0;
}

/* The socket beside a last snapshot taken (PID.sock next to PID.last or
 * PID.last.tmp): its process is gone, and one that became another user
 * could not remove it from its first user's directory. Ours and refusing
 * connections only. */
static void remove_socket_beside(const char *last)
{
    char sock[PATH_MAX];
    const char *dot = strstr(strrchr(last, '/') ? strrchr(last, '/') : last, HI_LAST_SUFFIX);
    if (!dot || (size_t)(dot - last) + sizeof(".sock") > sizeof(sock))
        return;
    snprintf(sock, sizeof(sock), "%.*s.sock", (int)(dot - last), last);
    remove_if_refused(sock);
}

/* Opens PID<suffix>: next to the socket it was reached on, in our
 * directories for uid, or (root, process gone) in another user's. */
static int find_file(pid_t pid, uid_t uid, int gone, const char *sock, const char *suffix, char *path,
                     size_t pathlen)
{
    int fd = -ENOENT;
    size_t sl = sock ? strlen(sock) : 0, xl = strlen(".sock");
    if (sl > xl && !strcmp(sock + sl - xl, ".sock") && sl - xl + strlen(suffix) < pathlen) {
        /* Next to the socket it was reached on: the directory of its
         * user, which a process already reaped no longer tells. */
        snprintf(path, pathlen, "%.*s%s", (int)(sl - xl), sock, suffix);
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        fd = fd < 0 ? -errno : fd;
    }
    if (fd == -ENOENT)
        fd = open_file(pid, uid, suffix, path, pathlen);
    if (fd == -ENOENT && gone && geteuid() == 0)
        fd = open_other_users_file(pid, suffix, path, pathlen);
    return fd;
}

static void how_it_ended(const struct hi_last_header *h, char *note, size_t len)
{
    char when[64] = "?";
    time_t t = (time_t)(h->realtime_ns / 1000000000ull);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm);
    if (h->how == HI_LAST_SIGNAL)
        snprintf(note, len, "pid %d exited at %s (killed by signal %d, %s); its last snapshot, written by its "
                 "profiler as it ended", (int)h->pid, when, h->code, strsignal(h->code));
    else
        snprintf(note, len, "pid %d exited at %s (exit code %d); its last snapshot, written by its profiler at exit",
                 (int)h->pid, when, h->code & 0xff);
}

int cli_last_snapshot_take(pid_t pid, struct cli_profile *p, char *note, size_t notelen, char *path,
                           size_t pathlen)
{
    return cli_last_snapshot_take_exit(pid, p, note, notelen, path, pathlen, NULL, NULL);
}

int cli_last_snapshot_take_exit(pid_t pid, struct cli_profile *p, char *note, size_t notelen, char *path,
                                size_t pathlen, struct cli_target_exit *x, const char *sock)
{
    char state = 0;
    unsigned long long start = 0;
    uid_t uid = geteuid();
    int gone = proc_state(pid, &state, &start) < 0;
    if (!gone && state != 'Z')
        return 0; /* it runs: its agent answers, or it has none */
    if (!gone)
        cli_proc_uid(pid, &uid); /* a zombie's directory is its user's */
    int fd = find_file(pid, uid, gone, sock, HI_LAST_SUFFIX, path, pathlen);
    /* A worker that became another user after a root parent's fork could
     * not rename its file: it left it whole under its first name
     * (payload/serve/last_keep.h). */
    bool kept = false;
    if (fd == -ENOENT && (fd = find_file(pid, uid, gone, sock, HI_LAST_SUFFIX ".tmp", path, pathlen)) >= 0)
        kept = true;
    if (fd == -ENOENT)
        return 0;
    if (fd < 0) {
        fprintf(stderr, "heapinject: pid %d: cannot read its last snapshot %s: %s\n", (int)pid, path, strerror(-fd));
        return fd;
    }
    struct stat st;
    struct hi_last_header h;
    const char *why = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_uid != geteuid() && geteuid() != 0)
        why = "not owned by you";
    else if (st.st_mode & 077)
        why = "readable by others (not written by heapinject)";
    else if (st.st_size < (off_t)sizeof(h) || st.st_size > (off_t)HI_LAST_MAX_BYTES)
        why = "of a size no last snapshot has";
    else if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h.magic, HI_LAST_MAGIC, sizeof(h.magic)) != 0)
        why = "not a last snapshot";
    else if (h.version != HI_PROTO_VERSION)
        why = "written by another version of heapinject";
    else if (h.snapshot_bytes != (uint64_t)st.st_size - sizeof(h))
        why = "incomplete";
    if (why && kept && (!strcmp(why, "incomplete") || st.st_size < (off_t)sizeof(h))) {
        close(fd); /* opened at its start and never written: it left none */
        return 0;
    }
    if (why) {
        close(fd);
        fprintf(stderr, "heapinject: pid %d: %s is %s; it is left as it is\n", (int)pid, path, why);
        return -EPROTO;
    }
    /* A zombie that is not the process the file is of: an earlier one
     * with the same pid. */
    if (!gone && h.start_ticks && start && h.start_ticks != start) {
        close(fd);
        return 0;
    }
    struct cli_client c;
    cli_client_init(&c);
    int rc = cli_client_use_fd(&c, fd);
    if (rc == 0)
        rc = cli_client_read_snapshot(&c, p);
    if (rc < 0)
        fprintf(stderr, "heapinject: pid %d: its last snapshot %s is unreadable: %s\n", (int)pid, path, c.error);
    cli_client_close(&c);
    if (rc < 0)
        return rc;
    how_it_ended(&h, note, notelen);
    remove_socket_beside(path);
    if (x) {
        memset(x, 0, sizeof(*x));
        x->status_known = true;
        if (h.how == HI_LAST_SIGNAL)
            x->signal = h.code;
        else
            x->exit_code = h.code & 0xff;
        x->stacks = true;
        x->at_exit = true;
        x->at_unix_s = (double)h.realtime_ns / 1e9;
    }
    return 1;
}

int cli_left_socket_remove(pid_t pid, const char *path, bool quiet)
{
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
        return 0;
    /* Mapped (a session starting or closing: its bind comes before its
     * listen), unreadable or gone: not ours to judge. */
    if (cli_slots_payload_mapped(pid) != 0 || unlink(path) < 0)
        return 0;
    if (!quiet)
        fprintf(stderr, "heapinject: pid %d has run exec since its profiler started (a fork child followed by "
                "'attach --follow-forks' that exec'd): nothing of the profiler is left in it; its socket %s was "
                "removed.\n", (int)pid, path);
    return 1;
}

/* Whether a unix socket at path refuses connections (nobody listens). */
static bool refuses(const char *path)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(a.sun_path))
        return false;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool refused = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == ECONNREFUSED;
    close(fd);
    return refused;
}

/* After a detach: PID.last.tmp beside the socket at sock, opened at the
 * start of a followed worker's session and never written (a worker that
 * became another user could not remove it from its first user's
 * directory: payload/serve/last_keep.h). Ours, and not whole, only. */
static void remove_unwritten_beside(const char *sock)
{
    char tmp[PATH_MAX];
    size_t n = strlen(sock), xl = strlen(".sock");
    if (n <= xl || strcmp(sock + n - xl, ".sock") != 0 || n - xl + sizeof(HI_LAST_SUFFIX ".tmp") > sizeof(tmp))
        return;
    snprintf(tmp, sizeof(tmp), "%.*s" HI_LAST_SUFFIX ".tmp", (int)(n - xl), sock);
    struct stat st;
    if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !cli_paths_last_whole(tmp, &st))
        unlink(tmp);
}

int cli_socket_wait_gone(const char *path)
{
    for (int i = 0; i < 100; i++) {
        struct stat st;
        if (lstat(path, &st) < 0) {
            remove_unwritten_beside(path);
            return 0;
        }
        if (remove_if_refused(path)) {
            remove_unwritten_beside(path);
            return 1;
        }
        struct timespec ts = { 0, 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}

size_t cli_last_snapshot_scan(const char *dir, struct cli_last_entry *out, size_t cap)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while (n < cap && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        bool kept = !strcmp(end, HI_LAST_SUFFIX ".tmp"); /* whole only: last_keep.h */
        if (pid <= 0 || (strcmp(end, HI_LAST_SUFFIX) != 0 && !kept))
            continue;
        char state = 0;
        unsigned long long start = 0;
        if (proc_state((pid_t)pid, &state, &start) == 0 && state != 'Z')
            continue; /* it runs: a pid used again, or it is ending now */
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat st;
        struct hi_last_header h;
        /* Only the header: the take that follows checks the whole file. */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == geteuid() || geteuid() == 0) &&
            read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && !memcmp(h.magic, HI_LAST_MAGIC, sizeof(h.magic)) &&
            (!kept || hi_last_header_whole(&h, (uint64_t)st.st_size))) {
            out[n].pid = (pid_t)pid;
            out[n].ppid = (pid_t)h.ppid;
            snprintf(out[n].sock, sizeof(out[n].sock), "%s/%ld.sock", dir, pid);
            n++;
        }
        close(fd);
    }
    closedir(d);
    return n;
}
